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

// Byte classes for the checks below, one bit each in byteClass, so that
// a check can OR or AND the classes of all bytes of a string without a
// branch per byte and look for the culprit only when there is one.
const (
	className         = 1 << iota // HAProxy allows it in proxy, server and defaults names and in guids
	classSpaceControl             // isSpace or isControl
	classControlNoTab             // isControl, but not a tab
	classHexDigit                 // 0-9 a-f, as in a Digest
	classJSONSafe                 // encoding/json writes it unescaped (jsonSafe)
)

var byteClass = func() (t [256]uint8) {
	for b := range 256 {
		c := byte(b)
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			c == '_' || c == '.' || c == ':' || c == '-' {
			t[b] |= className
		}
		if isSpace(c) || isControl(c) {
			t[b] |= classSpaceControl
		}
		if isControl(c) && c != '\t' {
			t[b] |= classControlNoTab
		}
		if c >= '0' && c <= '9' || c >= 'a' && c <= 'f' {
			t[b] |= classHexDigit
		}
		if c < utf8.RuneSelf && jsonSafe[c] {
			t[b] |= classJSONSafe
		}
	}
	return t
}()

// allOf ANDs the classes of the bytes of s: the classes every byte has.
func allOf(s string) uint8 {
	all := uint8(0xff)
	i := 0
	for ; i+4 <= len(s); i += 4 {
		w := s[i : i+4]
		all &= byteClass[w[0]] & byteClass[w[1]] & byteClass[w[2]] & byteClass[w[3]]
	}
	for ; i < len(s); i++ {
		all &= byteClass[s[i]]
	}
	return all
}

// anyOf ORs the classes of the bytes of s: the classes some byte has. high
// ORs the bytes themselves: it is below 0x80 if s is ASCII.
func anyOf(s string) (classes, high uint8) {
	i := 0
	for ; i+4 <= len(s); i += 4 {
		w := s[i : i+4]
		classes |= byteClass[w[0]] | byteClass[w[1]] | byteClass[w[2]] | byteClass[w[3]]
		high |= w[0] | w[1] | w[2] | w[3]
	}
	for ; i < len(s); i++ {
		classes |= byteClass[s[i]]
		high |= s[i]
	}
	return classes, high
}

// validUTF8 is utf8.ValidString, given high from anyOf.
func validUTF8(s string, high uint8) bool {
	return high < utf8.RuneSelf || utf8.ValidString(s)
}

// nameProblem says what is wrong with a backend, server or profile name,
// or "" if nothing is.
func nameProblem(s string) string {
	if s == "" {
		return "is empty"
	}
	if len(s) > MaxNameLen {
		return fmt.Sprintf("is longer than %d bytes", MaxNameLen)
	}
	if allOf(s)&className != 0 {
		return ""
	}
	for i := 0; i < len(s); i++ {
		if byteClass[s[i]]&className == 0 {
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
	if canonicalIPv4(s) {
		return ""
	}
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

// canonicalIPv4 reports whether s is an IPv4 address in the form
// netip.Addr.String gives: four decimal fields of 0 to 255 without
// leading zeros, separated by dots. It decides the common case without
// parsing; a false result says nothing.
func canonicalIPv4(s string) bool {
	dots, val, digits := 0, 0, 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '.' {
			if digits == 0 || dots == 3 {
				return false
			}
			dots, val, digits = dots+1, 0, 0
			continue
		}
		if c-'0' > 9 || digits == 1 && val == 0 { // not a digit, or after a leading zero
			return false
		}
		val = val*10 + int(c-'0')
		digits++
		if val > 255 {
			return false
		}
	}
	return dots == 3 && digits > 0
}

// pathProblem checks a file path relative to the HAProxy base directory.
func pathProblem(p string) string {
	switch {
	case p == "":
		return "is empty"
	case strings.HasPrefix(p, "/"):
		return "is absolute"
	case len(p) > MaxPathLen:
		return fmt.Sprintf("is longer than %d bytes", MaxPathLen)
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
	classes, high := anyOf(k)
	if classes&classSpaceControl != 0 {
		return "contains whitespace or a control character"
	}
	if !validUTF8(k, high) {
		return "is not valid UTF-8"
	}
	return ""
}

func mapValueProblem(val string) string {
	if val == "" {
		return "is empty"
	}
	classes, high := anyOf(val)
	if classes&classControlNoTab != 0 {
		return "contains a newline or another control character"
	}
	if first, last := val[0], val[len(val)-1]; first == ' ' || first == '\t' || last == ' ' || last == '\t' {
		return "starts or ends with a space or tab"
	}
	if !validUTF8(val, high) {
		return "is not valid UTF-8"
	}
	return ""
}
