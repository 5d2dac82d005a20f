package templating

import (
	"fmt"
	"net/netip"
	"strings"
	"unicode/utf8"
)

// The checks below mirror renderplan's validation rules so that bad values
// coming from objects become [Problem]s at the author-API call, before
// they could make the whole plan invalid.

func legalNameByte(c byte) bool {
	return c == '_' || c == '.' || c == ':' || c == '-' ||
		c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// nameProblem checks a backend, server or profile name.
func nameProblem(s string) string {
	if s == "" {
		return "is empty"
	}
	for i := 0; i < len(s); i++ {
		if !legalNameByte(s[i]) {
			return fmt.Sprintf("has invalid character %q (allowed: A-Z a-z 0-9 _ . : -)", rune(s[i]))
		}
	}
	return ""
}

// SanitizeName turns s into an HAProxy-legal proxy or server name: every
// byte outside A-Z a-z 0-9 _ . : - becomes '_', and an empty s becomes "_".
// Distinct inputs can map to the same name; callers that need uniqueness
// must check it. It is the template function haproxyName.
func SanitizeName(s string) string {
	if nameProblem(s) == "" {
		return s
	}
	if s == "" {
		return "_"
	}
	b := []byte(s)
	for i, c := range b {
		if !legalNameByte(c) {
			b[i] = '_'
		}
	}
	return string(b)
}

func isControl(b byte) bool { return b < 0x20 || b == 0x7f }

func isSpace(b byte) bool {
	return b == ' ' || b == '\t' || b == '\n' || b == '\r' || b == '\v' || b == '\f'
}

// lineProblem checks a directive line written verbatim into a section.
func lineProblem(s string) string {
	switch {
	case strings.TrimSpace(s) == "":
		return "is empty"
	case strings.ContainsAny(s, "\n\r\x00"):
		return "contains a newline, carriage return or NUL"
	case !utf8.ValidString(s):
		return "is not valid UTF-8"
	}
	return ""
}

// tokenProblem checks one word of a directive (server keyword, timeout).
func tokenProblem(s string) string {
	if s == "" {
		return "is empty"
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case isSpace(c):
			return "contains whitespace"
		case isControl(c):
			return "contains a control character"
		case c == '"' || c == '\'' || c == '\\' || c == '#':
			return fmt.Sprintf("contains %q", rune(c))
		}
	}
	if !utf8.ValidString(s) {
		return "is not valid UTF-8"
	}
	return ""
}

// addressProblem checks a server address: an IP address in canonical form.
func addressProblem(s string) string {
	a, err := netip.ParseAddr(s)
	var buf [64]byte
	switch {
	case err != nil:
		return "is not an IP address"
	case a.Zone() != "":
		return "has a zone"
	case string(a.AppendTo(buf[:0])) != s:
		return fmt.Sprintf("is not in canonical form %q", a.String())
	}
	return ""
}

func mapKeyProblem(k string) string {
	if k == "" {
		return "is empty"
	}
	if k[0] == '#' {
		return "starts with '#' (a comment in a map file)"
	}
	for i := 0; i < len(k); i++ {
		if isSpace(k[i]) || isControl(k[i]) {
			return "contains whitespace or a control character"
		}
	}
	if !utf8.ValidString(k) {
		return "is not valid UTF-8"
	}
	return ""
}

func mapValueProblem(val string) string {
	if val == "" {
		return "is empty"
	}
	for i := 0; i < len(val); i++ {
		if c := val[i]; isControl(c) && c != '\t' {
			return "contains a newline or another control character"
		}
	}
	if first, last := val[0], val[len(val)-1]; first == ' ' || first == '\t' || last == ' ' || last == '\t' {
		return "starts or ends with a space or tab"
	}
	if !utf8.ValidString(val) {
		return "is not valid UTF-8"
	}
	return ""
}
