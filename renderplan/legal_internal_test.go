package renderplan

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCanonicalIPv4AcceptsExactlyWhatNetipWritesForIPv4(t *testing.T) {
	for _, s := range []string{
		"0.0.0.0", "10.0.0.1", "255.255.255.255", "1.22.133.4", "192.168.100.200",
		"", ".", "1.2.3", "1.2.3.4.5", "1..2.3", ".1.2.3", "1.2.3.", "01.2.3.4", "1.02.3.4", "1.2.3.00",
		"256.1.1.1", "1.2.3.256", "1000.1.1.1", "1.2.3.4 ", " 1.2.3.4", "1.2.3.4%eth0", "::1", "::ffff:1.2.3.4",
		"1.2.3.-4", "1.2.3.+4", "1.2.3.4/8", "a.b.c.d", "1.2.3.4\x00", "300.300.300.300", "00.0.0.0",
	} {
		checkCanonicalIPv4(t, s)
	}
	for i := range 100000 {
		checkCanonicalIPv4(t, fmt.Sprintf("%d.%d.%d.%d", i%300, i/7%260, i/3%256, i%1001))
	}
}

// FuzzCanonicalIPv4: canonicalIPv4 accepts exactly the IPv4 addresses in
// the form netip.Addr.String writes, so that it may stand in for
// parsing in the validator.
func FuzzCanonicalIPv4(f *testing.F) {
	f.Add("10.0.0.1")
	f.Add("010.0.0.1")
	f.Fuzz(func(t *testing.T, s string) {
		checkCanonicalIPv4(t, s)
	})
}

func checkCanonicalIPv4(t *testing.T, s string) {
	t.Helper()
	a, err := netip.ParseAddr(s)
	want := err == nil && a.Is4() && a.String() == s
	if got := canonicalIPv4(s); got != want {
		t.Fatalf("canonicalIPv4(%q) = %v, want %v", s, got, want)
	}
	if want && addressProblem(s) != "" {
		t.Fatalf("addressProblem(%q) = %q for a canonical IPv4 address", s, addressProblem(s))
	}
}

// The checks decide the common case over byte classes; these are the
// byte-by-byte rules they must agree with.

func nameProblemByBytes(s string) string {
	if s == "" {
		return "is empty"
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		legal := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("_.:-", c) >= 0
		if !legal {
			return fmt.Sprintf("has invalid character %q (allowed: A-Z a-z 0-9 _ . : -)", rune(c))
		}
	}
	return ""
}

func mapKeyProblemByBytes(k string) string {
	switch {
	case k == "":
		return "is empty"
	case k[0] == '#':
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

func mapValueProblemByBytes(val string) string {
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

func validDigestByBytes(d Digest) bool {
	if len(d) != 16 {
		return false
	}
	for i := 0; i < len(d); i++ {
		if c := d[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

func TestStringChecksAgreeWithTheirByteByByteRules(t *testing.T) {
	for _, base := range []string{"a", "abcd", "abcdefg", "0123456789abcdef", "be_ns0001_svc0001_http"} {
		for pos := range len(base) {
			for c := range 256 {
				b := []byte(base)
				b[pos] = byte(c)
				checkStringChecks(t, string(b))
			}
		}
	}
	for _, s := range []string{"", "#", "#a", " a", "a ", "\ta", "a\t", "é", "\xff", "a\u2028b", "k\x7f", "0123456789ABCDEF"} {
		checkStringChecks(t, s)
	}
}

// FuzzStringChecks: the name, map key, map value and digest checks agree
// with their byte-by-byte rules.
func FuzzStringChecks(f *testing.F) {
	f.Add("be_app")
	f.Add("host.example.com\x00")
	f.Fuzz(func(t *testing.T, s string) {
		checkStringChecks(t, s)
	})
}

func checkStringChecks(t *testing.T, s string) {
	t.Helper()
	for _, c := range []struct {
		name      string
		got, want string
	}{
		{"nameProblem", nameProblem(s), nameProblemByBytes(s)},
		{"mapKeyProblem", mapKeyProblem(s), mapKeyProblemByBytes(s)},
		{"mapValueProblem", mapValueProblem(s), mapValueProblemByBytes(s)},
		{"validDigest", fmt.Sprint(validDigest(Digest(s))), fmt.Sprint(validDigestByBytes(Digest(s)))},
	} {
		if c.got != c.want {
			t.Fatalf("%s(%q) = %q, want %q", c.name, s, c.got, c.want)
		}
	}
}
