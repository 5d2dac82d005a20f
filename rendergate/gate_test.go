package rendergate_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/haptic-io/haptic/rendergate"
)

// step is one call on a Gate: Admit when admit is set, else Record.
type step struct {
	admit string

	record  string
	verdict rendergate.Verdict
	pods    []rendergate.PodState

	want        outcome
	wantLatched bool
}

// outcome is what a step returns, without the human reason.
type outcome struct {
	Dispatch, Validate bool
	Verdict            rendergate.Verdict
	Reverts            []rendergate.Revert
}

func pods(kv ...string) []rendergate.PodState {
	var ps []rendergate.PodState
	for i := 0; i < len(kv); i += 2 {
		ps = append(ps, rendergate.PodState{Pod: kv[i], AppliedPlanID: kv[i+1]})
	}
	return ps
}

func revert(pod, plan string) rendergate.Revert {
	return rendergate.Revert{Pod: pod, PlanID: plan, Mode: rendergate.ModeRevertLKG}
}

var (
	dispatchAndValidate = outcome{Dispatch: true, Validate: true}
	validateFirst       = outcome{Validate: true}
	pass, refused       = rendergate.VerdictPass, rendergate.VerdictRefused
)

func TestGateStateMachine(t *testing.T) {
	tests := []struct {
		name  string
		steps []step
	}{
		{"a new plan is dispatched at once and validated in the background", []step{
			{admit: "A", want: dispatchAndValidate},
			{record: "A", verdict: pass, pods: pods("p1", "A")},
			{admit: "B", want: dispatchAndValidate},
		}},
		{"a refusal reverts only the pods on the refused plan and latches", []step{
			{admit: "B", want: dispatchAndValidate},
			{record: "B", verdict: refused, pods: pods("p3", "B", "p1", "B", "p2", "A", "p4", ""),
				want: outcome{Reverts: []rendergate.Revert{revert("p1", "B"), revert("p3", "B")}}, wantLatched: true},
		}},
		{"a refusal no pod runs reverts nothing but still latches", []step{
			{record: "B", verdict: refused, pods: pods("p1", "A"), wantLatched: true},
		}},
		{"a latched gate validates before dispatch until a plan passes", []step{
			{record: "B", verdict: refused, wantLatched: true},
			{admit: "C", want: validateFirst, wantLatched: true},
			{record: "C", verdict: refused, pods: pods("p1", "A"), wantLatched: true},
			{admit: "D", want: validateFirst, wantLatched: true},
			{record: "D", verdict: pass, pods: pods("p1", "A")},
			{admit: "E", want: dispatchAndValidate},
		}},
		{"a refused plan is never dispatched nor checked again", []step{
			{record: "B", verdict: refused, wantLatched: true},
			{admit: "B", want: outcome{Verdict: refused}, wantLatched: true},
			{record: "C", verdict: pass},
			{admit: "B", want: outcome{Verdict: refused}},
		}},
		{"a plan that passed before is dispatched without a check and unlatches", []step{
			{record: "A", verdict: pass},
			{record: "B", verdict: refused, wantLatched: true},
			{admit: "A", want: outcome{Dispatch: true, Verdict: pass}},
			{admit: "C", want: dispatchAndValidate},
		}},
		{"an unknown verdict neither reverts, latches nor unlatches", []step{
			{record: "A", verdict: rendergate.VerdictUnknown, pods: pods("p1", "A")},
			{admit: "A", want: dispatchAndValidate},
			{record: "B", verdict: refused, wantLatched: true},
			{record: "C", verdict: rendergate.VerdictUnknown, wantLatched: true},
			{admit: "C", want: validateFirst, wantLatched: true},
		}},
		{"recording the same refusal twice reverts the pods still on it", []step{
			{record: "B", verdict: refused, pods: pods("p1", "B"), want: outcome{Reverts: []rendergate.Revert{revert("p1", "B")}}, wantLatched: true},
			{record: "B", verdict: refused, pods: pods("p1", "A"), wantLatched: true},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := rendergate.NewGate(rendergate.GateConfig{})
			must(t, err)
			for i, s := range tt.steps {
				var got outcome
				if s.admit != "" {
					d := g.Admit(s.admit)
					if d.Reason == "" {
						t.Errorf("step %d: Admit(%s) gave no reason", i, s.admit)
					}
					got = outcome{Dispatch: d.Dispatch, Validate: d.Validate, Verdict: d.Verdict}
				} else {
					got = outcome{Reverts: g.Record(s.record, s.verdict, s.pods)}
				}
				if diff := cmp.Diff(s.want, got); diff != "" {
					t.Errorf("step %d (%+v): outcome (-want +got):\n%s", i, s, diff)
				}
				if g.Latched() != s.wantLatched {
					t.Errorf("step %d: Latched() = %v, want %v", i, g.Latched(), s.wantLatched)
				}
			}
		})
	}
}

func TestGateLatchedByNamesTheRefusedPlan(t *testing.T) {
	g, err := rendergate.NewGate(rendergate.GateConfig{})
	must(t, err)
	if got := g.LatchedBy(); got != "" {
		t.Fatalf("new gate LatchedBy() = %q, want empty", got)
	}
	g.Record("B", refused, nil)
	if got := g.LatchedBy(); got != "B" {
		t.Fatalf("LatchedBy() = %q, want B", got)
	}
	g.Record("C", pass, nil)
	if got := g.LatchedBy(); got != "" {
		t.Fatalf("after a pass LatchedBy() = %q, want empty", got)
	}
}

func TestGateMemoryForgetsTheLeastRecentlyUsedPlan(t *testing.T) {
	g, err := rendergate.NewGate(rendergate.GateConfig{Memory: 2})
	must(t, err)
	g.Record("A", pass, nil)
	g.Record("B", pass, nil)
	g.Admit("A") // A is now more recent than B
	g.Record("C", pass, nil)
	got := map[string]rendergate.Verdict{"A": g.Verdict("A"), "B": g.Verdict("B"), "C": g.Verdict("C")}
	want := map[string]rendergate.Verdict{"A": pass, "B": rendergate.VerdictUnknown, "C": pass}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("verdicts (-want +got):\n%s", diff)
	}
	if d := g.Admit("B"); !d.Validate || !d.Dispatch {
		t.Fatalf("a forgotten plan is admitted as %+v, want dispatch and validate", d)
	}
}

func TestGateMemoryDefaultIs256(t *testing.T) {
	g, err := rendergate.NewGate(rendergate.GateConfig{})
	must(t, err)
	for i := range rendergate.DefaultMemory + 1 {
		g.Record(string(rune('a'+i%26))+string(rune(i)), pass, nil)
	}
	first := "a" + string(rune(0))
	second := "b" + string(rune(1))
	if g.Verdict(first) != rendergate.VerdictUnknown || g.Verdict(second) != pass {
		t.Fatalf("after %d records: first %v, second %v; want the first forgotten and the second kept",
			rendergate.DefaultMemory+1, g.Verdict(first), g.Verdict(second))
	}
}

func TestNewGateRefusesNegativeMemory(t *testing.T) {
	if _, err := rendergate.NewGate(rendergate.GateConfig{Memory: -1}); err == nil {
		t.Fatal("NewGate accepted Memory -1")
	}
}

func TestVerdictString(t *testing.T) {
	got := []string{rendergate.VerdictUnknown.String(), pass.String(), refused.String()}
	if diff := cmp.Diff([]string{"unknown", "pass", "refused"}, got); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
}

func TestGateIsSafeForConcurrentUse(t *testing.T) {
	g, err := rendergate.NewGate(rendergate.GateConfig{Memory: 8})
	must(t, err)
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 200 {
				id := fmt.Sprintf("plan-%d", (w*7+i)%16)
				g.Admit(id)
				v := pass
				if i%5 == 0 {
					v = refused
				}
				for _, r := range g.Record(id, v, pods("p1", id, "p2", "other")) {
					if r.Pod != "p1" || r.PlanID != id {
						t.Errorf("revert %+v for plan %s", r, id)
					}
				}
				g.Latched()
				g.Verdict(id)
			}
		})
	}
	wg.Wait()
}
