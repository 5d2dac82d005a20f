package rendergate

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestAlertsOfKeepsOnlyAlertLinesInOrder(t *testing.T) {
	output := "[NOTICE]   (1) : version\n" +
		"[ALERT]    (1) : config : parsing [haproxy.cfg:3] : unknown keyword 'x'\r\n" +
		"[WARNING]  (1) : odd\n" +
		"   | continuation\n" +
		"[ALERT]    (1) : config : Fatal errors found in configuration."
	want := []string{
		"[ALERT]    (1) : config : parsing [haproxy.cfg:3] : unknown keyword 'x'",
		"[ALERT]    (1) : config : Fatal errors found in configuration.",
	}
	if diff := cmp.Diff(want, alertsOf(output)); diff != "" {
		t.Fatalf("alertsOf (-want +got):\n%s", diff)
	}
}

func TestStripAlertPrefix(t *testing.T) {
	tests := map[string]string{
		"[ALERT]    (12345) : config : parsing [haproxy.cfg:3] : x": "config : parsing [haproxy.cfg:3] : x",
		"[ALERT]    (1) : Lua runtime error: a (b) : c":             "Lua runtime error: a (b) : c",
		"[ALERT] no pid here":      "no pid here",
		"  not an alert  ":         "not an alert",
		"[ALERT]":                  "",
		"[ALERT]    (unterminated": "(unterminated",
	}
	for in, want := range tests {
		if got := stripAlertPrefix(in); got != want {
			t.Errorf("stripAlertPrefix(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestReasonOfFallsBackToTheFirstLineThenTheExitCode(t *testing.T) {
	tests := []struct {
		name   string
		alerts []string
		output string
		want   string
	}{
		{"first alert", []string{"[ALERT] (1) : a", "[ALERT] (1) : b"}, "", "a"},
		{"first non-empty line", nil, "\n  \nno listener\nmore\n", "no listener"},
		{"nothing printed", nil, "", "haproxy -c exited with status 3 and printed nothing"},
	}
	for _, tt := range tests {
		if got := reasonOf(tt.alerts, tt.output, 3); got != tt.want {
			t.Errorf("%s: reasonOf = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestCappedBufferKeepsTheFirstBytesAndCountsTheRest(t *testing.T) {
	b := cappedBuffer{max: 5}
	for _, s := range []string{"abc", "defg", "hij"} {
		if n, err := b.Write([]byte(s)); n != len(s) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", s, n, err)
		}
	}
	if got, want := b.String(), "abcde\n[rendergate: 5 more bytes of output dropped]\n"; got != want {
		t.Fatalf("String() = %q, want %q", got, want)
	}
	small := cappedBuffer{max: 10}
	small.Write([]byte("ok"))
	if small.String() != "ok" {
		t.Fatalf("String() under the cap = %q, want %q", small.String(), "ok")
	}
}

// FuzzAlerts checks the reading of haproxy's output, which a hostile
// configuration partly controls (Lua error text, quoted file lines): every
// alert is a whole line of the output holding the marker, none is lost,
// and the one-line reason never spans lines.
func FuzzAlerts(f *testing.F) {
	f.Fuzz(func(t *testing.T, output string, exitCode int) {
		alerts := alertsOf(output)
		want := 0
		for line := range strings.Lines(output) {
			if strings.Contains(line, alertMarker) {
				if want >= len(alerts) || !strings.HasPrefix(line, alerts[want]) {
					t.Fatalf("alert %d = %q, not the line %q", want, alerts, line)
				}
				want++
			}
		}
		if want != len(alerts) {
			t.Fatalf("%d alerts for %d alert lines", len(alerts), want)
		}
		for _, a := range alerts {
			if strings.ContainsAny(a, "\n") || !strings.Contains(a, alertMarker) {
				t.Fatalf("alert %q is not one alert line", a)
			}
		}
		reason := reasonOf(alerts, output, exitCode)
		if strings.Contains(reason, "\n") {
			t.Fatalf("reason %q spans lines", reason)
		}
		if len(alerts) == 0 && strings.TrimSpace(output) == "" && reason == "" {
			t.Fatal("empty reason for empty output")
		}
	})
}
