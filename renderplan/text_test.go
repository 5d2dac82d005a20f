package renderplan_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/haptic-io/haptic/renderplan"
)

func TestBackendTextRendersTheDocumentedFormat(t *testing.T) {
	tests := []struct {
		name string
		be   renderplan.Backend
		want string
	}{
		{
			name: "dynamic backend without servers",
			be:   renderplan.Backend{Name: "be_a", GUID: "g-a", Profile: "web"},
			want: "backend be_a from web\n    guid g-a\n\n",
		},
		{
			name: "every server option, IPv4 and IPv6",
			be: renderplan.Backend{Name: "be_a", GUID: "g-a", Profile: "web", Servers: []renderplan.Server{
				{Name: "a", Address: "10.0.0.1", Port: 80, Weight: 0},
				{Name: "b", Address: "2001:db8::1", Port: 443, Weight: 256, Disabled: true, Check: true, Keywords: []string{"ssl", "verify", "none"}},
				{Name: "c", Address: "::ffff:10.0.0.2", Port: 1, Weight: 1, Check: true},
			}},
			want: "backend be_a from web\n" +
				"    guid g-a\n" +
				"    server a 10.0.0.1:80 weight 0\n" +
				"    server b [2001:db8::1]:443 weight 256 disabled check ssl verify none\n" +
				"    server c [::ffff:10.0.0.2]:1 weight 1 check\n" +
				"\n",
		},
		{
			name: "structural backend: body before servers, verbatim",
			be: renderplan.Backend{Name: "be_s", GUID: "g-s", Profile: "web", Body: []string{"stick-table type ip size 1k", `http-request return status 404 string "no route"`},
				Servers: []renderplan.Server{{Name: "x", Address: "127.0.0.1", Port: 8080, Weight: 1}}},
			want: "backend be_s from web\n" +
				"    guid g-s\n" +
				"    stick-table type ip size 1k\n" +
				"    http-request return status 404 string \"no route\"\n" +
				"    server x 127.0.0.1:8080 weight 1\n" +
				"\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, renderplan.BackendText(tt.be)); diff != "" {
				t.Errorf("BackendText (-want +got):\n%s", diff)
			}
		})
	}
}

func TestProfileTextRendersANamedDefaultsSection(t *testing.T) {
	got := renderplan.ProfileText("haptic-be-0123456789ab", []string{"mode http", "balance roundrobin"})
	want := "defaults haptic-be-0123456789ab\n    mode http\n    balance roundrobin\n\n"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ProfileText (-want +got):\n%s", diff)
	}
}

func TestProfileNameIsSharedBySameShapeOnly(t *testing.T) {
	lines := []string{"mode http", "balance roundrobin", "timeout server 30s"}
	a := renderplan.ProfileName("http", lines)
	if !strings.HasPrefix(a, renderplan.ProfileNamePrefix) || len(a) != len(renderplan.ProfileNamePrefix)+12 {
		t.Fatalf("ProfileName = %q, want %s + 12 hex digits", a, renderplan.ProfileNamePrefix)
	}
	if b := renderplan.ProfileName("http", append([]string(nil), lines...)); b != a {
		t.Errorf("same shape: %s and %s", a, b)
	}
	for name, other := range map[string]string{
		"other mode":         renderplan.ProfileName("tcp", lines),
		"other line":         renderplan.ProfileName("http", []string{"mode http", "balance leastconn", "timeout server 30s"}),
		"lines reordered":    renderplan.ProfileName("http", []string{"balance roundrobin", "mode http", "timeout server 30s"}),
		"line split":         renderplan.ProfileName("http", []string{"mode http", "balance", "roundrobin", "timeout server 30s"}),
		"fewer lines":        renderplan.ProfileName("http", lines[:2]),
		"mode moved to line": renderplan.ProfileName("", append([]string{"http"}, lines...)),
	} {
		if other == a {
			t.Errorf("%s: same profile name %s", name, a)
		}
	}
}

func TestMapTextWritesOneLinePerEntryInOrder(t *testing.T) {
	m := renderplan.Map{Path: "maps/p.map", Ordered: true, Entries: []renderplan.MapEntry{
		{Key: "/b", Value: "be_b"}, {Key: "/a", Value: "be a"},
	}}
	if got, want := string(renderplan.MapText(m)), "/b be_b\n/a be a\n"; got != want {
		t.Errorf("MapText = %q, want %q", got, want)
	}
	if got := renderplan.MapText(renderplan.Map{Path: "maps/e.map"}); len(got) != 0 {
		t.Errorf("MapText of an empty map = %q, want nothing", got)
	}
}

func TestDigestIsSixteenHexDigitsOfXXHash64(t *testing.T) {
	// xxhash64("") with seed 0 is ef46db3751d8e999.
	if got := renderplan.DigestOf(nil); got != "ef46db3751d8e999" {
		t.Errorf("DigestOf(nil) = %s, want ef46db3751d8e999", got)
	}
	if renderplan.DigestString("abc") != renderplan.DigestOf([]byte("abc")) {
		t.Error("DigestString and DigestOf disagree")
	}
	if renderplan.DigestString("abc") == renderplan.DigestString("abd") {
		t.Error("different input, same digest")
	}
}

func TestHostPortBracketsIPv6(t *testing.T) {
	for addr, want := range map[string]string{"10.0.0.1": "10.0.0.1:80", "::1": "[::1]:80", "2001:db8::7": "[2001:db8::7]:80"} {
		if got := renderplan.HostPort(addr, 80); got != want {
			t.Errorf("HostPort(%q, 80) = %q, want %q", addr, got, want)
		}
	}
}
