package deployplan

import (
	"testing"
	"time"

	"github.com/haptic-io/haptic/agentapi/runtimeop"
	"github.com/haptic-io/haptic/renderplan"
)

func TestRuntimeCostMatchesTheMeasuredRouteAdd(t *testing.T) {
	// 1,000 routes on 3.4 = add backend, add server, set state ready,
	// publish, add map: 5,000 commands measured at 43 ms.
	var ops []runtimeop.Op
	for range 1000 {
		ops = append(ops,
			runtimeop.Op{Kind: runtimeop.OpAddBackend}, runtimeop.Op{Kind: runtimeop.OpAddServer},
			runtimeop.Op{Kind: runtimeop.OpSetServerState}, runtimeop.Op{Kind: runtimeop.OpPublishBackend},
			runtimeop.Op{Kind: runtimeop.OpAddMapEntry})
	}
	if got := runtimeCost(ops); got < 35*time.Millisecond || got > 55*time.Millisecond {
		t.Errorf("runtimeCost of 5,000 commands = %v, want about the measured 43 ms", got)
	}
}

func TestReloadCostMatchesTheMeasured3000Backends(t *testing.T) {
	p := &renderplan.Plan{Backends: make([]renderplan.Backend, 3000)}
	if got := reloadCost(p); got < 130*time.Millisecond || got > 160*time.Millisecond {
		t.Errorf("reloadCost of 3,000 backends = %v, want about the measured 146 ms", got)
	}
}

func TestMapReplaceWorthItOnlyForLargeChanges(t *testing.T) {
	tests := []struct {
		changes, total int
		want           bool
	}{
		{1, 10, false},
		{63, 63, false},    // below the minimum, even if everything changed
		{64, 64, true},     // everything changed
		{100, 120, true},   // most entries changed
		{100, 5000, false}, // a few percent of a large map: per entry
		{2000, 5000, true},
	}
	for _, tt := range tests {
		if got := mapReplaceWorthIt(tt.changes, tt.total); got != tt.want {
			t.Errorf("mapReplaceWorthIt(%d, %d) = %v, want %v", tt.changes, tt.total, got, tt.want)
		}
	}
}
