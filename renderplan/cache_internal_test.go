package renderplan

import (
	"fmt"
	"testing"
)

// TestPlanCacheHoldsCompleteEntriesOfTheLatestBuildOnly checks that the
// cache holds one build's worth (after builds with fewer backends and
// maps, only the latest build's remain) and that each entry holds all
// that the next build reuses.
func TestPlanCacheHoldsCompleteEntriesOfTheLatestBuildOnly(t *testing.T) {
	var c PlanCache
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
		if _, err := c.NewPlan(pieces, []Profile{{Name: "web", Mode: "http"}}, backends, maps, nil); err != nil {
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
