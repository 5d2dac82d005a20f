package renderplan_test

import (
	"sync"
	"testing"

	"github.com/haptic-io/haptic/renderplan"
)

// A built plan is read-only and safe for concurrent reads: run under
// -race, readers of every method share one plan.
func TestPlanIsSafeForConcurrentReads(t *testing.T) {
	p := bigOutput(t, 100).Plan
	want := p.ID()
	var wg sync.WaitGroup
	errs := make(chan string, 4*10)
	for range 4 {
		wg.Go(func() {
			for range 10 {
				if p.ID() != want {
					errs <- "ID changed"
				}
				if err := p.Validate(); err != nil {
					errs <- err.Error()
				}
				if _, ok := p.Backend(p.Backends[50].Name); !ok {
					errs <- "Backend lookup failed"
				}
				if !p.Equal(p.Clone()) {
					errs <- "Clone not Equal"
				}
				_ = p.CoreDigest()
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// Outputs of one Cache share memory, yet building the next output
// writes nothing an earlier one holds: run under -race, readers of each
// output run while the cache builds the next.
func TestCacheBuildsWhileEarlierOutputsAreRead(t *testing.T) {
	pieces, profiles, backends, maps := threeMapInputs(50, true)
	var c renderplan.Cache
	var wg sync.WaitGroup
	for i := range 20 {
		out, err := c.NewOutput(pieces, profiles, backends, maps, nil)
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			if _, err := out.Plan.Encode(); err != nil {
				t.Error(err)
			}
			for _, f := range out.Files {
				_ = renderplan.DigestOf(f.Body)
			}
			_ = out.Plan.Validate()
		})
		pieces, backends, maps = addRoute(pieces, backends, maps, i)
	}
	wg.Wait()
}
