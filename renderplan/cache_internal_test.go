package renderplan

import (
	"fmt"
	"testing"
)

// TestCacheHoldsCompleteEntriesOfTheLatestBuildOnly checks that the
// cache holds one build's worth (after builds with fewer backends and
// maps, only the latest build's remain) and that each entry holds all
// that the next build reuses.
func TestCacheHoldsCompleteEntriesOfTheLatestBuildOnly(t *testing.T) {
	var c Cache
	for _, n := range []int{10, 10, 4, 7, 0, 3} {
		var pieces []Piece
		var backends []Backend
		var maps []Map
		pieces = append(pieces, Piece{Kind: SectionProfile, Name: "web", Text: ProfileText("web", []string{"mode http"})})
		for i := range n {
			name := fmt.Sprintf("be_%d", i)
			backends = append(backends, Backend{Name: name, GUID: "g-" + name, Profile: "web"})
			pieces = append(pieces, Piece{Kind: SectionBackend, Name: name})
			maps = append(maps, Map{Path: fmt.Sprintf("maps/m%d.map", i), Entries: []MapEntry{{Key: "k", Value: name}}})
		}
		if _, err := c.NewOutput(pieces, []Profile{{Name: "web", Mode: "http"}}, backends, maps, nil); err != nil {
			t.Fatal(err)
		}
		if len(c.backends.m) != n || len(c.maps.m) != n {
			t.Errorf("after a build of %d backends and maps the cache holds %d backends and %d maps", n, len(c.backends.m), len(c.maps.m))
		}
		// What the next build reuses is complete: text, digest, verdict.
		for name, e := range c.backends.m {
			if text := BackendText(e.be); e.text != text || e.digest != DigestString(text) || !e.checked || !e.valid {
				t.Errorf("backend %s: cache entry has text %q, digest %q, checked %v, valid %v; want text %q, its digest, checked and valid",
					name, e.text, e.digest, e.checked, e.valid, text)
			}
		}
		for path, e := range c.maps.m {
			if body := MapText(Map{Entries: e.entries}); string(e.body) != string(body) || e.digest != DigestOf(body) || !e.checked || !e.valid {
				t.Errorf("map %s: cache entry has body %q, digest %q, checked %v, valid %v", path, e.body, e.digest, e.checked, e.valid)
			}
		}
	}
}

// TestCacheFindsBackendsInTheLatestBuildsOrderOnlyWhenStillCached
// checks the walk over the latest build's entries: an entry another of
// its name replaced (two backends of one name) is not reused from there,
// and after every build the cache holds, per name, the entry of the
// backend that build was given.
func TestCacheFindsBackendsInTheLatestBuildsOrderOnlyWhenStillCached(t *testing.T) {
	web := []Profile{{Name: "web", Mode: "http"}}
	piece := func(names ...string) []Piece {
		ps := []Piece{{Kind: SectionProfile, Name: "web", Text: ProfileText("web", []string{"mode http"})}}
		for _, n := range names {
			ps = append(ps, Piece{Kind: SectionBackend, Name: n})
		}
		return ps
	}
	a1 := Backend{Name: "be_a", GUID: "g-a1", Profile: "web"}
	a2 := Backend{Name: "be_a", GUID: "g-a2", Profile: "web"}
	b := Backend{Name: "be_b", GUID: "g-b", Profile: "web"}
	c0 := Backend{Name: "be_c", GUID: "g-c", Profile: "web"}
	builds := []struct {
		backends []Backend
		names    []string
	}{
		{[]Backend{a1, b, c0}, []string{"be_a", "be_b", "be_c"}},
		{[]Backend{a1, a2, b}, []string{"be_a", "be_b"}}, // be_a twice: a2's entry replaces a1's
		{[]Backend{a1, b}, []string{"be_a", "be_b"}},     // a1 again: its entry in last is replaced
		{[]Backend{b, c0}, []string{"be_b", "be_c"}},     // one gone, one back
		{[]Backend{a2, b, c0}, []string{"be_a", "be_b", "be_c"}},
	}
	for _, compact := range []bool{false, true} {
		t.Run(fmt.Sprintf("compacted after each build %v", compact), func(t *testing.T) {
			checkBuildsOfOneName(t, builds, piece, web, compact)
		})
	}
}

func checkBuildsOfOneName(t *testing.T, builds []struct {
	backends []Backend
	names    []string
}, piece func(...string) []Piece, web []Profile, compact bool) {
	var c Cache
	for step, bld := range builds {
		got, err := c.NewOutput(piece(bld.names...), web, bld.backends, nil, nil)
		want, wantErr := NewOutput(piece(bld.names...), web, bld.backends, nil, nil)
		if fmt.Sprint(err) != fmt.Sprint(wantErr) {
			t.Fatalf("build %d: error %v, want %v", step, err, wantErr)
		}
		if err == nil && string(got.Files[0].Body) != string(want.Files[0].Body) {
			t.Fatalf("build %d: %s differs from NewOutput's", step, got.Files[0].Path)
		}
		given := map[string]Backend{}
		for _, be := range bld.backends {
			given[be.Name] = be // the last of a name: its entry replaced the others
		}
		if len(c.backends.m) != len(given) {
			t.Errorf("build %d: cache holds %d backends, want %d", step, len(c.backends.m), len(given))
		}
		for name, e := range c.backends.m {
			if e.used != c.gen || e.in.GUID != given[name].GUID || e.gone {
				t.Errorf("build %d: cache entry of %s has guid %s, used by build %d (gone %v); want guid %s, used by build %d",
					step, name, e.in.GUID, e.used, e.gone, given[name].GUID, c.gen)
			}
		}
		if compact {
			c.born = compactMin // however few are new
			if !c.Compact() {
				t.Fatalf("build %d: Compact did nothing", step)
			}
		}
	}
}
