package gatewayapi

import "strings"

// hostnameProblem says why h is not a lower-case DNS name, optionally
// "*."-prefixed (Gateway API hostnames); "" for one. The API server's
// schema checks the same, but a manifest can hold anything, and a
// hostname reaches map keys.
func hostnameProblem(h string) string {
	name := strings.TrimPrefix(h, "*.")
	if name == "" || len(h) > 253 {
		return "empty or longer than 253 bytes"
	}
	for _, label := range strings.Split(name, ".") {
		if label == "" || len(label) > 63 {
			return "has an empty label or one longer than 63 bytes"
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			switch {
			case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
			case c == '-' && i > 0 && i < len(label)-1:
			default:
				return "is not a lower-case DNS name"
			}
		}
	}
	return ""
}

// validName says whether s is a DNS label as listener names and Service
// names are ([a-z0-9-], at most 63 bytes); such a name is safe in map
// keys and HAProxy identifiers.
func validName(s string) bool {
	if s == "" || len(s) > 63 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' {
			return false
		}
	}
	return true
}

// intersect returns the hostname requests for both a listener hostname
// (l, "" for any) and a route hostname (r) match, and whether there is
// one: the more specific of the two when one contains the other.
// Wildcards match one or more labels ("*.example.com" matches
// "a.b.example.com", not "example.com").
func intersect(l, r string) (string, bool) {
	if l == "" {
		return r, true
	}
	if l == r {
		return l, true
	}
	lw, rw := strings.HasPrefix(l, "*."), strings.HasPrefix(r, "*.")
	switch {
	case lw && !rw:
		if strings.HasSuffix(r, l[1:]) {
			return r, true
		}
	case !lw && rw:
		if strings.HasSuffix(l, r[1:]) {
			return l, true
		}
	case lw && rw:
		if strings.HasSuffix(r, l[1:]) {
			return r, true
		}
		if strings.HasSuffix(l, r[1:]) {
			return l, true
		}
	}
	return "", false
}

// lower is strings.ToLower for ASCII names.
func lower(s string) string { return strings.ToLower(s) }
