package haproxytest

import (
	"strings"
	"testing"
	"unicode"

	"github.com/google/go-cmp/cmp"
)

func TestParseVersionReadsTheFirstLineOfHAProxyV(t *testing.T) {
	tests := []struct {
		name    string
		out     string
		want    string
		wantErr bool
	}{
		{name: "3.4 debian", out: "HAProxy version 3.4.7-1 2026/10/14 - https://haproxy.org/\nStatus: long-term supported branch\n", want: "3.4.7-1"},
		{name: "3.0 trixie security", out: "HAProxy version 3.0.11-1+deb13u4 2026/10/15 - https://haproxy.org/\n", want: "3.0.11-1+deb13u4"},
		{name: "old banner", out: "HA-Proxy version 2.6.12-1+deb12u1 2023/12/16 - https://haproxy.org/", want: "2.6.12-1+deb12u1"},
		{name: "version only on a later line", out: "garbage\nHAProxy version 3.4.7-1\n", wantErr: true},
		{name: "empty", out: "", wantErr: true},
		{name: "version is the last word", out: "HAProxy version", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseVersion(tt.out)
			if (err != nil) != tt.wantErr {
				t.Fatalf("parseVersion error = %v, wantErr %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("parseVersion (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSeriesOfKeepsMajorAndMinor(t *testing.T) {
	got := map[string]string{}
	for _, v := range []string{"3.4.7-1", "3.0.11-1+deb13u4", "3.2", "3", ""} {
		got[v] = seriesOf(v)
	}
	want := map[string]string{"3.4.7-1": "3.4", "3.0.11-1+deb13u4": "3.0", "3.2": "3.2", "3": "", "": ""}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("seriesOf (-want +got):\n%s", diff)
	}
}

// FuzzParseVersion: a parsed version is one non-empty word that occurs in the
// first line, right after the word "version".
func FuzzParseVersion(f *testing.F) {
	f.Add("HAProxy version 3.4.7-1 2026/10/14 - https://haproxy.org/\n")
	f.Fuzz(func(t *testing.T, out string) {
		v, err := parseVersion(out)
		if err != nil {
			return
		}
		first, _, _ := strings.Cut(out, "\n")
		if v == "" || strings.ContainsFunc(v, unicode.IsSpace) {
			t.Fatalf("parseVersion(%q) = %q: empty or has spaces", out, v)
		}
		if !strings.Contains(strings.ToLower(first), "version") || !strings.Contains(first, v) {
			t.Fatalf("parseVersion(%q) = %q: not from the first line after \"version\"", out, v)
		}
	})
}
