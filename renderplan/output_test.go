package renderplan_test

import (
	"sync"
	"testing"

	"github.com/haptic-io/haptic/renderplan"
)

func TestOutputIDIsThePlanID(t *testing.T) {
	for name, out := range map[string]*renderplan.Output{
		"built":      fullOutput(t),
		"big":        bigOutput(t, 300),
		"hand-built": {Plan: fullOutput(t).Plan.Clone()},
	} {
		want := out.Plan.ID()
		for range 3 {
			if got := out.ID(); got != want {
				t.Errorf("%s: Output.ID() = %q, Plan.ID() = %q", name, got, want)
			}
		}
	}
	var none *renderplan.Output
	if id := none.ID(); id != "" {
		t.Errorf("nil Output has ID %q, want empty", id)
	}
	if id := (&renderplan.Output{}).ID(); id != "" {
		t.Errorf("Output without a plan has ID %q, want empty", id)
	}
}

// The ID is computed by the first call only: a later change of the plan
// (which the immutability contract forbids) does not reach it, which
// shows that it is not encoded again.
func TestOutputIDIsComputedOnce(t *testing.T) {
	out := &renderplan.Output{Plan: fullOutput(t).Plan.Clone()}
	first := out.ID()
	out.Plan.Backends[0].Servers[0].Weight++
	if out.Plan.ID() == first {
		t.Fatal("changing a weight did not change Plan.ID; the test proves nothing")
	}
	if got := out.ID(); got != first {
		t.Errorf("Output.ID() = %s after the plan changed, want the first ID %s", got, first)
	}
}

// Run under -race: concurrent first calls on one output agree.
func TestOutputIDIsSafeForConcurrentUse(t *testing.T) {
	out := bigOutput(t, 100)
	want := out.Plan.ID()
	ids := make([]string, 8)
	var wg sync.WaitGroup
	for i := range ids {
		wg.Go(func() { ids[i] = out.ID() })
	}
	wg.Wait()
	for i, id := range ids {
		if id != want {
			t.Errorf("goroutine %d: ID %s, want %s", i, id, want)
		}
	}
}
