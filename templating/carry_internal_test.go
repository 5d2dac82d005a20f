package templating

import (
	"context"
	"testing"

	"github.com/haptic-io/haptic/store"
	"github.com/haptic-io/haptic/templating/fixtures"
)

// TestPlanCacheGoesToOneRenderAtATimeAndOnlySucceededRendersKeepIt
// checks the carry's plan cache hand-over.
func TestPlanCacheGoesToOneRenderAtATimeAndOnlySucceededRendersKeepIt(t *testing.T) {
	var b carryBox
	c := b.takePlans(false)
	if c == nil {
		t.Fatal("the first render got no plan cache")
	}
	if b.takePlans(false) != nil {
		t.Fatal("a concurrent render got the plan cache another render holds")
	}
	b.putPlans(nil, true) // the concurrent render gives back nothing
	b.putPlans(c, true)
	if got := b.takePlans(false); got != c {
		t.Fatal("the render after a successful one did not get its plan cache")
	}
	b.putPlans(c, false)
	if got := b.takePlans(false); got == nil || got == c {
		t.Fatal("the render after a failed one did not get a new plan cache")
	}
	b.putPlans(c, true)
	if got := b.takePlans(true); got == nil || got == c {
		t.Fatal("a Fresh render did not get a new plan cache")
	}
}

// TestRerenderReusesThePreviousPlansBackendsAndMaps checks that the plan
// cache is wired in: with the stock libraries (whose backends come from
// renderEach), rendering the same store again gives the same plan built
// from the previous one's backends (their servers are shared) and maps.
func TestRerenderReusesThePreviousPlansBackendsAndMaps(t *testing.T) {
	base, err := LoadConfig("../libraries/base.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ingress, err := LoadConfig("../libraries/ingress.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cfg := Merge(base, ingress)
	e, err := Compile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.NewMemory(cfg.WatchedResources)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.AddObjects(fixtures.GenerateIngressMix(200)...); err != nil {
		t.Fatal(err)
	}
	snap := st.Snapshot()
	first, _, err := e.Render(context.Background(), snap, RenderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	second, _, err := e.Render(context.Background(), snap, RenderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if first.ID() != second.ID() {
		t.Fatal("same store, different plan IDs")
	}
	withServers, shared := 0, 0
	for i := range second.Plan.Backends {
		s1, s2 := first.Plan.Backends[i].Servers, second.Plan.Backends[i].Servers
		if len(s2) > 0 {
			withServers++
			if &s1[0] == &s2[0] {
				shared++
			}
		}
	}
	if withServers < 100 || shared != withServers {
		t.Errorf("%d of %d backends with servers share them with the previous plan, want all (and at least 100)", shared, withServers)
	}
	for i, m := range second.Plan.Maps {
		if len(m.Entries) > 0 && &m.Entries[0] != &first.Plan.Maps[i].Entries[0] {
			t.Errorf("map %s: entries not shared with the previous plan", m.Path)
		}
	}
}
