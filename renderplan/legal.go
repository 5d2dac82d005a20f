package renderplan

import (
	"fmt"
	"net/netip"
	"path"
	"strings"
	"unicode/utf8"
)

// The checks below say what is wrong with one string, or "" if nothing
// is. They encode what HAProxy accepts in names and what keeps a rendered
// line or map entry from changing meaning.

// legalNameByte[b] is true for the bytes HAProxy allows in proxy, server
// and defaults names and in guids.
var legalNameByte = func() (t [256]bool) {
	for b := 'a'; b <= 'z'; b++ {
		t[b] = true
	}
	for b := 'A'; b <= 'Z'; b++ {
		t[b] = true
	}
	for b := '0'; b <= '9'; b++ {
		t[b] = true
	}
	t['_'], t['.'], t[':'], t['-'] = true, true, true, true
	return t
}()

// nameProblem says what is wrong with a backend, server or profile name,
// or "" if nothing is.
func nameProblem(s string) string {
	if s == "" {
		return "is empty"
	}
	for i := 0; i < len(s); i++ {
		if !legalNameByte[s[i]] {
			return fmt.Sprintf("has invalid character %q (allowed: A-Z a-z 0-9 _ . : -)", rune(s[i]))
		}
	}
	return ""
}

func guidProblem(s string) string {
	if len(s) > MaxGUIDLen {
		return fmt.Sprintf("longer than %d bytes", MaxGUIDLen)
	}
	return nameProblem(s)
}

// textProblem checks free text that is stored but never rendered.
func textProblem(s string) string {
	if !utf8.ValidString(s) {
		return "is not valid UTF-8"
	}
	return ""
}

// lineProblem checks a line rendered verbatim inside a section.
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

func isControl(b byte) bool { return b < 0x20 || b == 0x7f }

func isSpace(b byte) bool {
	return b == ' ' || b == '\t' || b == '\n' || b == '\r' || b == '\v' || b == '\f'
}

// tokenProblem checks one word of a server line.
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
			return fmt.Sprintf("contains %q, which changes how HAProxy splits the line", rune(c))
		}
	}
	if !utf8.ValidString(s) {
		return "is not valid UTF-8"
	}
	return ""
}

// addressProblem checks a server address: an IP address without a zone,
// in the canonical form [netip.Addr.String] gives.
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

// pathProblem checks a file path relative to the HAProxy base directory.
func pathProblem(p string) string {
	switch {
	case p == "":
		return "is empty"
	case strings.HasPrefix(p, "/"):
		return "is absolute"
	case !utf8.ValidString(p):
		return "is not valid UTF-8"
	}
	for i := 0; i < len(p); i++ {
		if isControl(p[i]) || isSpace(p[i]) {
			return "contains whitespace or a control character"
		}
	}
	for _, elem := range strings.Split(p, "/") {
		if elem == ".." {
			return `has a ".." element`
		}
	}
	if p == "." {
		return "names the base directory"
	}
	if path.Clean(p) != p {
		return fmt.Sprintf("is not clean (want %q)", path.Clean(p))
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
