package renderplan_test

import (
	"sync"
	"testing"
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
