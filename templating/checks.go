package templating

import (
	"fmt"
	"strings"

	"github.com/haptic-io/haptic/renderplan"
)

// Values that come from objects are checked with renderplan's Check
// functions ([renderplan.CheckName] and its siblings) at the author-API
// call, so that a bad one becomes a [Problem] before it could make the
// whole plan invalid.

// SanitizeName turns s into an HAProxy-legal proxy or server name: every
// byte outside A-Z a-z 0-9 _ . : - becomes '_', an empty s becomes "_",
// and a name longer than [renderplan.MaxNameLen] keeps its start and ends
// with "-" and the digest of the whole. Distinct inputs can map to the
// same name; callers that need uniqueness must check it. It is the
// template function haproxyName.
func SanitizeName(s string) string {
	if renderplan.CheckName(s) == nil {
		return s
	}
	if s == "" {
		return "_"
	}
	b := []byte(s)
	for i := range b {
		// A one-byte name is legal exactly when its byte is.
		if renderplan.CheckName(s[i:i+1]) != nil {
			b[i] = '_'
		}
	}
	if len(b) > renderplan.MaxNameLen {
		d := renderplan.DigestString(s)
		b = append(append(b[:renderplan.MaxNameLen-len(d)-1], '-'), d...)
	}
	return string(b)
}

// DNSNameProblem says why s is not a lower-case DNS name as RFC 1123 has
// it: labels of 1 to 63 bytes of a-z, 0-9 and '-', neither starting nor
// ending with '-', 253 bytes in all; "*" may be the whole first label
// ("*.example.com"), nowhere else. It returns "" for a valid name. It is
// the template function dnsNameProblem.
func DNSNameProblem(s string) string {
	if s == "" {
		return "is empty"
	}
	if len(s) > 253 {
		return "is longer than 253 bytes"
	}
	rest := strings.TrimPrefix(s, "*.")
	for {
		label, more, found := strings.Cut(rest, ".")
		switch {
		case label == "*":
			return `has "*" other than as its whole first label`
		case label == "":
			return "has an empty label"
		case len(label) > 63:
			return fmt.Sprintf("has a label of %d bytes, more than 63", len(label))
		case label[0] == '-' || label[len(label)-1] == '-':
			return fmt.Sprintf("has a label %q that starts or ends with '-'", label)
		}
		for j := 0; j < len(label); j++ {
			if c := label[j]; (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' {
				return fmt.Sprintf("has %q (allowed: a-z 0-9 - and .)", label[j:j+1])
			}
		}
		if !found {
			return ""
		}
		rest = more
	}
}

// pathChars are the bytes of an absolute URI path: RFC 3986 pchar, '/'
// and '%' (percent-encoding is not checked further).
var pathChars = func() (t [256]bool) {
	for _, c := range []byte("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~!$&'()*+,;=:@/%") {
		t[c] = true
	}
	return t
}()

// PathProblem says why path is not an absolute URI path of RFC 3986 path
// characters ('/' first; letters, digits and - . _ ~ ! $ & ' ( ) * + , ;
// = : @ / %) that takes at most max bytes of a map line, where ';' and
// "'" count twice (the runtime API escapes them; see Bounds). It returns
// nil for a good path, else a dict: "tooLong" (a bool: the path is good
// but too long) and "message". It is the template function pathProblem,
// which a library calls once per path:
//
//	{{ with pathProblem $path $max }}{{ if .tooLong }}…{{ else }}…{{ end }}{{ else }}…{{ end }}
func PathProblem(path string, max int) any {
	if path == "" || path[0] != '/' {
		return pathProblemDict(false, "is not an absolute path of RFC 3986 path characters")
	}
	n := len(path)
	for i := 0; i < len(path); i++ {
		c := path[i]
		if !pathChars[c] {
			return pathProblemDict(false, "is not an absolute path of RFC 3986 path characters")
		}
		if c == ';' || c == '\'' {
			n++
		}
	}
	if n > max {
		return pathProblemDict(true, fmt.Sprintf("(%d bytes) takes %d bytes of a map line, more than the %d it leaves for a path", len(path), n, max))
	}
	return nil
}

func pathProblemDict(tooLong bool, message string) map[string]any {
	return map[string]any{"tooLong": tooLong, "message": message}
}
