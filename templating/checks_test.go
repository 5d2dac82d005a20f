package templating_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/haptic-io/haptic/renderplan"
	"github.com/haptic-io/haptic/templating"
)

// TestSanitizeNameReplacesOnlyIllegalBytes checks that SanitizeName keeps
// legal names as they are, replaces each illegal byte with '_', and always
// returns a name renderplan accepts.
func TestSanitizeNameReplacesOnlyIllegalBytes(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"legal name is kept", "be_App-1.svc:80", "be_App-1.svc:80"},
		{"empty becomes underscore", "", "_"},
		{"space and slash become underscores", "a b/c", "a_b_c"},
		{"each byte of a multi-byte rune is replaced", "bé", "b__"},
		{"control characters are replaced", "a\x00\n", "a__"},
		{"quotes and hash are replaced", `"a'#`, "_a__"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := templating.SanitizeName(tt.in)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("SanitizeName(%q) (-want +got):\n%s", tt.in, diff)
			}
			if err := renderplan.CheckName(got); err != nil {
				t.Errorf("CheckName(SanitizeName(%q)) = %v, want nil", tt.in, err)
			}
		})
	}
}

func TestDNSNameProblemFollowsRFC1123WithALeadingWildcard(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"example.com", ""},
		{"a-b.c0.example", ""},
		{"localhost", ""},
		{"*.example.com", ""},
		{strings.Repeat("a", 63) + ".com", ""},
		{strings.Repeat("abcdefg.", 31) + "abcd", ""}, // 252 bytes
		{"", "is empty"},
		{"*", `has "*" other than as its whole first label`},
		{"*.", "has an empty label"},
		{"a.*.example.com", `has "*" other than as its whole first label`},
		{"*x.example.com", `has "*" (allowed: a-z 0-9 - and .)`},
		{"a..b--.*", "has an empty label"},
		{"b--.example", `has a label "b--" that starts or ends with '-'`},
		{"-a.example", `starts or ends with '-'`},
		{"example.com.", "has an empty label"},
		{strings.Repeat("a", 64) + ".com", "has a label of 64 bytes, more than 63"},
		{strings.Repeat("a", 300), "is longer than 253 bytes"},
		{strings.Repeat("abcdefg.", 31) + "abcde.x", "is longer than 253 bytes"},
		{"Example.com", `has "E" (allowed: a-z 0-9 - and .)`},
		{"a_b.example", `has "_"`},
		{"évil.example", `has "\xc3"`},
	} {
		got := templating.DNSNameProblem(tt.in)
		if tt.want == "" && got != "" || tt.want != "" && !strings.Contains(got, tt.want) {
			t.Errorf("DNSNameProblem(%.20q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestPathProblemChecksCharactersAndTheEscapedLength(t *testing.T) {
	for _, tt := range []struct {
		path    string
		max     int
		tooLong bool
		want    string // "" for a good path
	}{
		{"/", 10, false, ""},
		{"/a-b/c;d=e@f%20", 20, false, ""},
		{"/abcdefghi", 10, false, ""},
		{"/abcdefghij", 10, true, "(11 bytes) takes 11 bytes of a map line, more than the 10 it leaves for a path"},
		{"/;;;;;", 10, true, "(6 bytes) takes 11 bytes"},
		{"/'''", 7, false, ""},
		{"relative", 10, false, "is not an absolute path of RFC 3986 path characters"},
		{"", 10, false, "is not an absolute path"},
		{"/a b", 10, false, "is not an absolute path"},
		{"/x\n", 10, false, "is not an absolute path"},
		{`/q"x`, 10, false, "is not an absolute path"},
	} {
		got := templating.PathProblem(tt.path, tt.max)
		if tt.want == "" {
			if got != nil {
				t.Errorf("PathProblem(%q, %d) = %v, want nil", tt.path, tt.max, got)
			}
			continue
		}
		d, ok := got.(map[string]any)
		if !ok || d["tooLong"] != tt.tooLong || !strings.Contains(d["message"].(string), tt.want) {
			t.Errorf("PathProblem(%q, %d) = %v, want tooLong=%t and %q", tt.path, tt.max, got, tt.tooLong, tt.want)
		}
	}
}
