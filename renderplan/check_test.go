package renderplan_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/haptic-io/haptic/renderplan"
)

// TestCheckFunctionsReportTheRuleBroken feeds each exported check legal
// and illegal strings and compares the message it returns ("" for nil).
func TestCheckFunctionsReportTheRuleBroken(t *testing.T) {
	tests := []struct {
		name  string
		check func(string) error
		in    string
		want  string
	}{
		{"name accepts every allowed byte class", renderplan.CheckName, "be_App-1.svc:80", ""},
		{"name rejects empty", renderplan.CheckName, "", "is empty"},
		{"name rejects a space", renderplan.CheckName, "be app", `has invalid character ' ' (allowed: A-Z a-z 0-9 _ . : -)`},
		{"name rejects a slash", renderplan.CheckName, "ns/svc", `has invalid character '/' (allowed: A-Z a-z 0-9 _ . : -)`},
		{"name rejects a non-ASCII byte", renderplan.CheckName, "bé", `has invalid character 'Ã' (allowed: A-Z a-z 0-9 _ . : -)`},

		{"guid accepts a name", renderplan.CheckGUID, "be_app-s1", ""},
		{"guid accepts the longest allowed", renderplan.CheckGUID, strings.Repeat("g", renderplan.MaxGUIDLen), ""},
		{"guid rejects one byte too many", renderplan.CheckGUID, strings.Repeat("g", renderplan.MaxGUIDLen+1), "longer than 127 bytes"},
		{"guid rejects empty", renderplan.CheckGUID, "", "is empty"},
		{"guid rejects a slash", renderplan.CheckGUID, "be/s1", `has invalid character '/' (allowed: A-Z a-z 0-9 _ . : -)`},

		{"path accepts a nested relative path", renderplan.CheckPath, "maps/hosts.map", ""},
		{"path accepts dots inside an element", renderplan.CheckPath, "a..b/..c", ""},
		{"path accepts UTF-8", renderplan.CheckPath, "certs/ünï.pem", ""},
		{"path rejects empty", renderplan.CheckPath, "", "is empty"},
		{"path rejects an absolute path", renderplan.CheckPath, "/etc/passwd", "is absolute"},
		{"path rejects invalid UTF-8", renderplan.CheckPath, "a\xff", "is not valid UTF-8"},
		{"path rejects a space", renderplan.CheckPath, "a b.map", "contains whitespace or a control character"},
		{"path rejects NUL", renderplan.CheckPath, "a\x00", "contains whitespace or a control character"},
		{"path rejects a leading dot-dot", renderplan.CheckPath, "../x.map", `has a ".." element`},
		{"path rejects an inner dot-dot", renderplan.CheckPath, "a/../b", `has a ".." element`},
		{"path rejects the base directory", renderplan.CheckPath, ".", "names the base directory"},
		{"path rejects a double slash", renderplan.CheckPath, "a//b", `is not clean (want "a/b")`},
		{"path rejects a trailing slash", renderplan.CheckPath, "a/", `is not clean (want "a")`},
		{"path rejects a leading dot element", renderplan.CheckPath, "./a", `is not clean (want "a")`},

		{"line accepts a directive", renderplan.CheckLine, "http-request set-header X-A \"b c\"", ""},
		{"line rejects blank", renderplan.CheckLine, " \t", "is empty"},
		{"line rejects a newline", renderplan.CheckLine, "a\nb", "contains a newline, carriage return or NUL"},
		{"line rejects a carriage return", renderplan.CheckLine, "a\rb", "contains a newline, carriage return or NUL"},
		{"line rejects NUL", renderplan.CheckLine, "a\x00b", "contains a newline, carriage return or NUL"},
		{"line rejects invalid UTF-8", renderplan.CheckLine, "a\xffb", "is not valid UTF-8"},

		{"token accepts a keyword", renderplan.CheckToken, "inter=2s", ""},
		{"token accepts UTF-8", renderplan.CheckToken, "ünï", ""},
		{"token rejects empty", renderplan.CheckToken, "", "is empty"},
		{"token rejects a space", renderplan.CheckToken, "a b", "contains whitespace"},
		{"token rejects a tab", renderplan.CheckToken, "a\tb", "contains whitespace"},
		{"token rejects a control character", renderplan.CheckToken, "a\x01", "contains a control character"},
		{"token rejects a hash", renderplan.CheckToken, "#x", `contains '#', which changes how HAProxy splits the line`},
		{"token rejects a double quote", renderplan.CheckToken, `"x`, `contains '"', which changes how HAProxy splits the line`},
		{"token rejects a single quote", renderplan.CheckToken, "x'", `contains '\'', which changes how HAProxy splits the line`},
		{"token rejects a backslash", renderplan.CheckToken, `x\`, `contains '\\', which changes how HAProxy splits the line`},
		{"token rejects invalid UTF-8", renderplan.CheckToken, "\xff", "is not valid UTF-8"},

		{"address accepts IPv4", renderplan.CheckAddress, "10.0.0.1", ""},
		{"address accepts IPv6", renderplan.CheckAddress, "2001:db8::1", ""},
		{"address rejects empty", renderplan.CheckAddress, "", "is not an IP address"},
		{"address rejects a host name", renderplan.CheckAddress, "app.example", "is not an IP address"},
		{"address rejects a port", renderplan.CheckAddress, "10.0.0.1:80", "is not an IP address"},
		{"address rejects a zone", renderplan.CheckAddress, "fe80::1%eth0", "has a zone"},
		{"address rejects upper-case IPv6", renderplan.CheckAddress, "2001:DB8::1", `is not in canonical form "2001:db8::1"`},
		{"address rejects an uncompressed IPv6", renderplan.CheckAddress, "2001:db8:0:0:0:0:0:1", `is not in canonical form "2001:db8::1"`},
		{"address rejects IPv4-mapped IPv6 in dotted form", renderplan.CheckAddress, "::FFFF:10.0.0.1", `is not in canonical form "::ffff:10.0.0.1"`},

		{"map key accepts a host", renderplan.CheckMapKey, "app.example.com", ""},
		{"map key rejects empty", renderplan.CheckMapKey, "", "is empty"},
		{"map key rejects a leading hash", renderplan.CheckMapKey, "#k", "starts with '#' (a comment in a map file)"},
		{"map key accepts an inner hash", renderplan.CheckMapKey, "k#1", ""},
		{"map key rejects a space", renderplan.CheckMapKey, "a b", "contains whitespace or a control character"},
		{"map key rejects a control character", renderplan.CheckMapKey, "a\x7f", "contains whitespace or a control character"},
		{"map key rejects invalid UTF-8", renderplan.CheckMapKey, "\xff", "is not valid UTF-8"},

		{"map value accepts inner spaces and tabs", renderplan.CheckMapValue, "be_a be\tb", ""},
		{"map value rejects empty", renderplan.CheckMapValue, "", "is empty"},
		{"map value rejects a newline", renderplan.CheckMapValue, "a\nb", "contains a newline or another control character"},
		{"map value rejects a leading space", renderplan.CheckMapValue, " a", "starts or ends with a space or tab"},
		{"map value rejects a trailing tab", renderplan.CheckMapValue, "a\t", "starts or ends with a space or tab"},
		{"map value rejects invalid UTF-8", renderplan.CheckMapValue, "\xff", "is not valid UTF-8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ""
			if err := tt.check(tt.in); err != nil {
				got = err.Error()
				if got == "" {
					t.Fatalf("check(%q) returned an error with an empty message", tt.in)
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("check(%q) (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

// TestCheckFunctionsAgreeWithValidate puts each value into a valid plan
// where Validate applies the same rule: a value the check refuses must
// come back from Validate with the check's message, and a value it accepts
// must draw no complaint about that field.
func TestCheckFunctionsAgreeWithValidate(t *testing.T) {
	server := func(t *testing.T, p *renderplan.Plan) *renderplan.Server {
		be, ok := p.Backend("be_app")
		if !ok {
			t.Fatal("no backend be_app")
		}
		s, ok := be.Server("app-a")
		if !ok {
			t.Fatal("no server be_app/app-a")
		}
		return s
	}
	entry := func(t *testing.T, p *renderplan.Plan) *renderplan.MapEntry {
		m, ok := p.Map("maps/hosts.map")
		if !ok || len(m.Entries) == 0 {
			t.Fatal("no entries in maps/hosts.map")
		}
		return &m.Entries[0]
	}
	tests := []struct {
		name  string
		check func(string) error
		set   func(t *testing.T, p *renderplan.Plan, v string)
		field string // Validate's words before the problem; %q is the value
		in    []string
	}{
		{"server address", renderplan.CheckAddress,
			func(t *testing.T, p *renderplan.Plan, v string) { server(t, p).Address = v },
			"address %q", []string{"10.0.0.9", "2001:db8::1", "", "fe80::1%eth0", "2001:DB8::1", "host"}},
		{"server keyword", renderplan.CheckToken,
			func(t *testing.T, p *renderplan.Plan, v string) { server(t, p).Keywords = []string{v} },
			"keyword 1 %q", []string{"inter", "", "a b", "#x", `"x`, "\xff"}},
		{"map key", renderplan.CheckMapKey,
			func(t *testing.T, p *renderplan.Plan, v string) { entry(t, p).Key = v },
			"entry 1: key %q", []string{"a.example", "", "#a", "a b", "\xff"}},
		{"map value", renderplan.CheckMapValue,
			func(t *testing.T, p *renderplan.Plan, v string) { entry(t, p).Value = v },
			"entry 1: value %q", []string{"be_x", "be x", "", " be_x", "a\nb"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, v := range tt.in {
				p := fullOutput(t).Plan.Clone()
				tt.set(t, p, v)
				got := ""
				if err := p.Validate(); err != nil {
					got = err.Error()
				}
				field := fmt.Sprintf(tt.field, v)
				if err := tt.check(v); err != nil {
					if want := field + " " + err.Error(); !strings.Contains(got, want) {
						t.Errorf("%q: check says %q, but Validate() = %q, want it to contain %q", v, err, got, want)
					}
				} else if strings.Contains(got, field) {
					t.Errorf("%q: check accepts it, but Validate() = %q", v, got)
				}
			}
		})
	}
}

func ExampleCheckName() {
	for _, n := range []string{"be_app", "ns/app"} {
		if err := renderplan.CheckName(n); err != nil {
			fmt.Printf("backend name %q %v\n", n, err)
			continue
		}
		fmt.Printf("backend name %q is legal\n", n)
	}
	// Output:
	// backend name "be_app" is legal
	// backend name "ns/app" has invalid character '/' (allowed: A-Z a-z 0-9 _ . : -)
}
