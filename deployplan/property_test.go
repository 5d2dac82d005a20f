package deployplan_test

import (
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/haptic-io/haptic/agentapi/runtimeop"
	"github.com/haptic-io/haptic/deployplan"
	"github.com/haptic-io/haptic/renderplan"
)

// TestDiffRuntimeOpsReproduceAReload is the model proof: for random plan
// pairs, whenever Diff says runtime, applying its ops to the model of the
// base plan gives exactly the model of the next plan (what a reload on
// next's files would give), every op is accepted on the way, and no new
// map entry ever routes to an unpublished backend or one without a ready
// server. file_only and noop decisions must leave the model unchanged.
func TestDiffRuntimeOpsReproduceAReload(t *testing.T) {
	iterations := 3000
	if testing.Short() {
		iterations = 300
	}
	r := rand.New(rand.NewPCG(1, 2))
	verdicts := map[string]map[deployplan.Verdict]int{}
	for i := range iterations {
		bs := randSpec(r)
		ns := bs.mutate(r)
		bo, err := bs.build()
		if err != nil {
			t.Fatalf("pair %d: base: %v", i, err)
		}
		no, err := ns.build()
		if err != nil {
			t.Fatalf("pair %d: next: %v", i, err)
		}
		for _, v := range []string{"3.0", "3.2", "3.4"} {
			if verdicts[v] == nil {
				verdicts[v] = map[deployplan.Verdict]int{}
			}
			d := deployplan.Diff(no.Plan, deployplan.Baseline{Plan: bo.Plan, HAProxyVersion: v, AgentOps: runtimeop.OpKinds()})
			verdicts[v][d.Verdict]++
			checkDecision(t, i, v, bo.Plan, no.Plan, d)
		}
	}
	t.Logf("verdicts per series over %d random pairs: %v", iterations, verdicts)
	// The generator must exercise the runtime path, or the test proves
	// nothing.
	if got := verdicts["3.4"][deployplan.VerdictRuntime]; got < iterations/5 {
		t.Errorf("only %d of %d pairs were runtime on 3.4; the generator is too coarse", got, iterations)
	}
	if got := verdicts["3.0"][deployplan.VerdictRuntime]; got < iterations/10 {
		t.Errorf("only %d of %d pairs were runtime on 3.0", got, iterations)
	}
}

func checkDecision(t *testing.T, i int, series string, base, next *renderplan.Plan, d deployplan.Decision) {
	t.Helper()
	if len(d.Reasons) == 0 && d.Verdict != deployplan.VerdictNoop {
		t.Fatalf("pair %d on %s: %s without reasons", i, series, d.Verdict)
	}
	if d.Verdict != deployplan.VerdictRuntime && len(d.Ops) > 0 {
		t.Fatalf("pair %d on %s: %s with %d ops", i, series, d.Verdict, len(d.Ops))
	}
	if diff := cmp.Diff(next.Files, d.Files); diff != "" {
		t.Fatalf("pair %d on %s: files are not the next plan's full set (-want +got):\n%s", i, series, diff)
	}
	if d.Verdict == deployplan.VerdictReload {
		return
	}
	m := modelOf(base)
	for k, o := range d.Ops {
		if err := o.Validate(); err != nil {
			t.Fatalf("pair %d on %s: op %d %v invalid: %v", i, series, k, o, err)
		}
		if err := m.apply(o); err != nil {
			t.Fatalf("pair %d on %s: op %d %v refused: %v\ndecision:\n%s", i, series, k, o, err, d)
		}
		if p := m.routingProblem(base, next); p != "" {
			t.Fatalf("pair %d on %s: after op %d %v: %s\ndecision:\n%s", i, series, k, o, p, d)
		}
		if !dynamicBackendsOK(series) && (o.Kind == runtimeop.OpAddBackend || o.Kind == runtimeop.OpDelBackend) {
			t.Fatalf("pair %d on %s: backend op %v below 3.4", i, series, o)
		}
	}
	// A certificate is observable when the running process loaded it,
	// i.e. it is in base; a new certificate file is loaded by the reload
	// that makes something name it.
	keep := func(path string) bool { _, ok := base.File(path); _, ok2 := next.File(path); return ok && ok2 }
	want := modelOf(next).comparable(keep)
	got := m.comparable(keep)
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(modelBackend{})); diff != "" {
		t.Fatalf("pair %d on %s: %s ops do not reproduce a reload (-reload +runtime):\n%s\ndecision:\n%s", i, series, d.Verdict, diff, d)
	}
}

func dynamicBackendsOK(series string) bool { return series == "3.4" }
