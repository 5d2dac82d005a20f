package agent

import (
	"testing"

	"github.com/haptic-io/haptic/agentapi"
)

// The state keeps the first op results of the last apply and every
// failure, however many ops it had.
func TestStateOpsKeepTheFirstResultsAndEveryFailure(t *testing.T) {
	ops := make([]agentapi.OpResult, 40)
	for i := range ops {
		ops[i] = agentapi.OpResult{Index: i, OK: i != 3 && i != 25 && i != 26}
	}
	var got []int
	for _, r := range stateOps(ops) {
		got = append(got, r.Index)
	}
	want := []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 25, 26}
	if len(got) != len(want) {
		t.Fatalf("kept %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("kept %v, want %v", got, want)
		}
	}
	if short := ops[:5]; len(stateOps(short)) != 5 {
		t.Errorf("a short list was cut")
	}
}
