package renderplan_test

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"github.com/haptic-io/haptic/renderplan"
)

// FuzzDecode: Decode never panics, and whatever it accepts re-encodes to a
// fixed point: Encode(Decode(Encode(Decode(b)))) == Encode(Decode(b)), with
// Equal plans and IDs. Validate never panics on a decoded plan, and a plan
// that validates still validates after the round trip.
func FuzzDecode(f *testing.F) {
	full, err := fullOutput(f).Plan.Encode()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(full)
	f.Add([]byte(`{"schema":"haptic.renderplan/v1","sections":[],"files":[]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := renderplan.Decode(b)
		if err != nil {
			return
		}
		valid := p.Validate() == nil
		e1, err := p.Encode()
		if err != nil {
			t.Fatal(err)
		}
		q, err := renderplan.Decode(e1)
		if err != nil {
			t.Fatalf("Decode(Encode(p)) failed: %v\n%s", err, e1)
		}
		e2, err := q.Encode()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(e1, e2) {
			t.Fatalf("Encode is not a fixed point:\n%s\n%s", e1, e2)
		}
		if !p.Equal(q) || p.ID() != q.ID() {
			t.Fatal("round-tripped plan is not Equal or has another ID")
		}
		if valid && q.Validate() != nil {
			t.Fatalf("plan valid before the round trip, invalid after: %v", q.Validate())
		}
	})
}

// FuzzBackendText: for any backend that passes validation, BackendText has
// exactly the documented structure: 2 + len(body) + len(servers) lines and
// a final empty line, and each server line splits on whitespace (as
// HAProxy splits it) into exactly the tokens the fields say.
func FuzzBackendText(f *testing.F) {
	f.Add("be_app", "guid-be-app", "web", "app-0", "10.0.0.1", 8080, 1, false, true, "inter 2s", "")
	f.Add("be_v6", "g:1", "web", "pod.x-1", "2001:db8::1", 443, 0, true, false, "ssl verify none", "option httpchk")
	f.Add("be_bad\nbackend evil", "g", "web", "s", "127.0.0.1", 80, 1, false, false, "", "")
	f.Add("be", "g", "web", "s", "127.0.0.1", 80, 1, false, false, "sni\nstr(x)", "http-request deny\nbackend x")
	f.Fuzz(func(t *testing.T, name, guid, profile, server, addr string, port, weight int, disabled, check bool, keywords, body string) {
		checkBackendText(t, name, guid, profile, server, addr, port, weight, disabled, check, keywords, body)
	})
}

// checkBackendText is FuzzBackendText's property. It reports whether the
// input was valid, so that the property was checked.
func checkBackendText(t *testing.T, name, guid, profile, server, addr string, port, weight int, disabled, check bool, keywords, body string) bool {
	t.Helper()
	be := renderplan.Backend{
		Name: name, GUID: guid, Profile: profile,
		Servers: []renderplan.Server{
			{Name: server, Address: addr, Port: port, Weight: weight, Disabled: disabled, Check: check, Keywords: splitNonEmpty(keywords, " ")},
			{Name: "zz-fixed", Address: "127.0.0.1", Port: 1, Weight: 1},
		},
		Body: splitNonEmpty(body, "|"),
	}
	pieces := []renderplan.Piece{
		{Kind: renderplan.SectionProfile, Name: profile, Text: renderplan.ProfileText(profile, []string{"mode http"})},
		{Kind: renderplan.SectionBackend, Name: name},
	}
	out, err := renderplan.NewOutput(pieces, []renderplan.Profile{{Name: profile, Mode: "http"}}, []renderplan.Backend{be}, nil, nil)
	if err != nil {
		return false
	}
	be = out.Plan.Backends[0]
	text := renderplan.BackendText(be)
	if !strings.HasSuffix(text, "\n\n") {
		t.Fatalf("section does not end with an empty line: %q", text)
	}
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	if got, want := len(lines), 2+len(be.Body)+len(be.Servers)+1; got != want {
		t.Fatalf("%d lines, want %d:\n%s", got, want, text)
	}
	if got, want := haproxyFields(lines[0]), []string{"backend", name, "from", profile}; !slicesEqual(got, want) {
		t.Fatalf("first line splits into %q, want %q", got, want)
	}
	if got, want := haproxyFields(lines[1]), []string{"guid", guid}; !slicesEqual(got, want) {
		t.Fatalf("guid line splits into %q, want %q", got, want)
	}
	for i, s := range be.Servers {
		want := []string{"server", s.Name, renderplan.HostPort(s.Address, s.Port), "weight", strconv.Itoa(s.Weight)}
		if s.Disabled {
			want = append(want, "disabled")
		}
		if s.Check {
			want = append(want, "check")
		}
		want = append(want, s.Keywords...)
		if got := haproxyFields(lines[2+len(be.Body)+i]); !slicesEqual(got, want) {
			t.Fatalf("server line splits into %q, want %q", got, want)
		}
	}
	if lines[len(lines)-1] != "" {
		t.Fatalf("last line %q is not empty", lines[len(lines)-1])
	}
	return true
}

func TestFuzzBackendTextValidSeedsReachTheProperty(t *testing.T) {
	if !checkBackendText(t, "be_app", "guid-be-app", "web", "app-0", "10.0.0.1", 8080, 1, false, true, "inter 2s", "") {
		t.Error("IPv4 seed is not valid")
	}
	if !checkBackendText(t, "be_v6", "g:1", "web", "pod.x-1", "2001:db8::1", 443, 0, true, false, "ssl verify none", "option httpchk|http-check expect status 200") {
		t.Error("IPv6 seed is not valid")
	}
}

// FuzzMapText: for entries that pass validation, reading the map file the
// way HAProxy does (key = first word, value = rest of the line, trimmed)
// gives back exactly the entries.
func FuzzMapText(f *testing.F) {
	f.Add("example.com", "be_app", "/shop", "be shop")
	f.Add("a b", "x", "k", "v\nk2 v2")
	f.Add("#c", "x", "k", " v ")
	f.Fuzz(func(t *testing.T, k1, v1, k2, v2 string) {
		checkMapText(t, k1, v1, k2, v2)
	})
}

// checkMapText is FuzzMapText's property; it reports whether the entries
// were valid, so that the property was checked.
func checkMapText(t *testing.T, k1, v1, k2, v2 string) bool {
	t.Helper()
	m := renderplan.Map{Path: "maps/f.map", Ordered: true, Entries: []renderplan.MapEntry{{Key: k1, Value: v1}, {Key: k2, Value: v2}}}
	b := renderplan.NewBuilder()
	if b.Map(m) != nil {
		return false
	}
	if _, err := b.Build(); err != nil {
		return false
	}
	var got []renderplan.MapEntry
	for _, line := range strings.Split(string(renderplan.MapText(m)), "\n") {
		line = strings.TrimLeft(line, " \t")
		if line == "" || line[0] == '#' {
			continue
		}
		key, value := line, ""
		if i := strings.IndexAny(line, " \t"); i >= 0 {
			key, value = line[:i], strings.Trim(line[i:], " \t\r")
		}
		got = append(got, renderplan.MapEntry{Key: key, Value: value})
	}
	if len(got) != 2 || got[0] != m.Entries[0] || got[1] != m.Entries[1] {
		t.Fatalf("map file %q reads back as %q, want %q", renderplan.MapText(m), got, m.Entries)
	}
	return true
}

func TestFuzzMapTextValidSeedsReachTheProperty(t *testing.T) {
	if !checkMapText(t, "example.com", "be_app", "/shop", "be shop") {
		t.Error("seed is not valid")
	}
	if !checkMapText(t, "k", "a\tb", "k2", "v") {
		t.Error("tab seed is not valid")
	}
}

// haproxyFields splits a configuration line into words the way HAProxy
// does for unquoted text: on ASCII whitespace only.
func haproxyFields(line string) []string {
	return strings.FieldsFunc(line, func(r rune) bool {
		return r == ' ' || r == '\t' || r == '\n' || r == '\v' || r == '\f' || r == '\r'
	})
}

func splitNonEmpty(s, sep string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, sep)
}

func slicesEqual(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
