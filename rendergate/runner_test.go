package rendergate_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/haptic-io/haptic/rendergate"
	"github.com/haptic-io/haptic/renderplan"
)

// fakeChecker hands every check to the test through calls; the test
// decides its outcome by sending on the call's release channel.
type fakeChecker struct{ calls chan fakeCall }

type fakeCall struct {
	id      string
	release chan error
}

func newFakeChecker() *fakeChecker { return &fakeChecker{calls: make(chan fakeCall)} }

func (f *fakeChecker) Check(ctx context.Context, out *renderplan.Output) error {
	c := fakeCall{id: out.Plan.ID(), release: make(chan error)}
	select {
	case f.calls <- c:
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case err := <-c.release:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

var _ renderplan.Checker = (*fakeChecker)(nil)

// gotResult is a Result reduced to what tests compare.
type gotResult struct {
	PlanID     string
	Verdict    rendergate.Verdict
	Superseded bool
}

// runnerHarness runs a Runner on a fake checker in a goroutine.
type runnerHarness struct {
	runner  *rendergate.Runner
	checker *fakeChecker
	results chan rendergate.Result
	cancel  context.CancelFunc
	done    chan error
}

func startRunner(t *testing.T) *runnerHarness {
	t.Helper()
	return startSpacedRunner(t, 0)
}

// startSpacedRunner is startRunner with RunnerConfig.Spacing.
func startSpacedRunner(t *testing.T, spacing time.Duration) *runnerHarness {
	t.Helper()
	h := &runnerHarness{checker: newFakeChecker(), results: make(chan rendergate.Result, 64)}
	r, err := rendergate.NewRunner(rendergate.RunnerConfig{
		Checker:  h.checker,
		OnResult: func(res rendergate.Result) { h.results <- res },
		Log:      testLogger(t),
		Spacing:  spacing,
	})
	must(t, err)
	h.runner = r
	h.run(t)
	return h
}

// run starts Run; stop ends it and returns its error.
func (h *runnerHarness) run(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel, h.done = cancel, make(chan error, 1)
	go func() { h.done <- h.runner.Run(ctx) }()
	t.Cleanup(func() { h.stop() })
}

func (h *runnerHarness) stop() error {
	h.cancel()
	err, ok := <-h.done
	if ok {
		close(h.done)
	}
	return err
}

// next waits for the next Check call.
func (h *runnerHarness) next(t *testing.T) fakeCall {
	t.Helper()
	return <-h.checker.calls
}

// take collects n results.
func (h *runnerHarness) take(t *testing.T, n int) []gotResult {
	t.Helper()
	var got []gotResult
	for range n {
		res := <-h.results
		superseded := errors.Is(res.Err, rendergate.ErrSuperseded)
		switch {
		case superseded && res.Output != nil:
			t.Fatalf("superseded result %s holds its output", res.PlanID)
		case !superseded && (res.Output == nil || res.Output.Plan.ID() != res.PlanID):
			t.Fatalf("result %s does not carry its output", res.PlanID)
		}
		got = append(got, gotResult{PlanID: res.PlanID, Verdict: res.Verdict, Superseded: superseded})
	}
	return got
}

func TestRunnerChecksOnlyTheNewestOutputWaitingBehindARunningCheck(t *testing.T) {
	h := startRunner(t)
	o1, o2, o3, o4 := planOutput(t, 1), planOutput(t, 2), planOutput(t, 3), planOutput(t, 4)

	h.runner.Submit(o1)
	c1 := h.next(t)
	h.runner.Submit(o2)
	h.runner.Submit(o3)
	h.runner.Submit(o4)
	c1.release <- nil
	c4 := h.next(t)
	if c4.id != o4.Plan.ID() {
		t.Fatalf("second check is of plan %s, want the newest %s", c4.id, o4.Plan.ID())
	}
	c4.release <- &rendergate.CheckError{PlanID: c4.id, ExitCode: 1, Reason: "bad"}

	want := []gotResult{
		{PlanID: o1.Plan.ID(), Verdict: rendergate.VerdictPass},
		{PlanID: o2.Plan.ID(), Superseded: true},
		{PlanID: o3.Plan.ID(), Superseded: true},
		{PlanID: o4.Plan.ID(), Verdict: rendergate.VerdictRefused},
	}
	if diff := cmp.Diff(want, h.take(t, len(want))); diff != "" {
		t.Fatalf("results (-want +got):\n%s", diff)
	}
	if err := h.stop(); !errors.Is(err, context.Canceled) {
		t.Fatalf("Run returned %v, want context.Canceled", err)
	}
}

func TestRunnerDoesNotQueueThePlanBeingCheckedButLetsItSupersede(t *testing.T) {
	h := startRunner(t)
	o1, o2, o3 := planOutput(t, 1), planOutput(t, 2), planOutput(t, 3)

	h.runner.Submit(o1)
	c1 := h.next(t)
	h.runner.Submit(o2)
	h.runner.Submit(o1) // newest again; its check is running
	c1.release <- nil
	h.runner.Submit(o3)
	c3 := h.next(t)
	if c3.id != o3.Plan.ID() {
		t.Fatalf("check after the running one is of plan %s, want %s (o1 checked twice or o2 not superseded)", c3.id, o3.Plan.ID())
	}
	c3.release <- nil
	h.expectPassSupersededPass(t, o1, o2, o3)
}

func TestRunnerSubmittingTheWaitingPlanAgainIsNotASupersession(t *testing.T) {
	h := startRunner(t)
	o1, o2 := planOutput(t, 1), planOutput(t, 2)
	h.runner.Submit(o1)
	c1 := h.next(t)
	h.runner.Submit(o2)
	h.runner.Submit(planOutput(t, 2))
	c1.release <- nil
	h.next(t).release <- nil
	want := []gotResult{
		{PlanID: o1.Plan.ID(), Verdict: rendergate.VerdictPass},
		{PlanID: o2.Plan.ID(), Verdict: rendergate.VerdictPass},
	}
	if diff := cmp.Diff(want, h.take(t, len(want))); diff != "" {
		t.Fatalf("results (-want +got):\n%s", diff)
	}
}

func TestRunnerReportsACheckThatCouldNotRunAsUnknown(t *testing.T) {
	h := startRunner(t)
	h.runner.Submit(planOutput(t, 1))
	broken := errors.New("exec: haproxy: no such file")
	h.next(t).release <- broken
	res := <-h.results
	if res.Verdict != rendergate.VerdictUnknown || !errors.Is(res.Err, broken) {
		t.Fatalf("result = %+v, want VerdictUnknown carrying the checker's error", res)
	}
}

func TestRunnerInterruptedCheckGivesNoResultAndRunsAgainOnTheNextRun(t *testing.T) {
	h := startRunner(t)
	o1 := planOutput(t, 1)
	h.runner.Submit(o1)
	h.next(t)
	if err := h.stop(); !errors.Is(err, context.Canceled) {
		t.Fatalf("Run returned %v, want context.Canceled", err)
	}
	if n := len(h.results); n != 0 {
		t.Fatalf("interrupted check gave %d results, want none", n)
	}
	h.run(t)
	c := h.next(t)
	if c.id != o1.Plan.ID() {
		t.Fatalf("next Run checked %s, want the interrupted %s", c.id, o1.Plan.ID())
	}
	c.release <- nil
	if diff := cmp.Diff([]gotResult{{PlanID: o1.Plan.ID(), Verdict: rendergate.VerdictPass}}, h.take(t, 1)); diff != "" {
		t.Fatalf("results (-want +got):\n%s", diff)
	}
}

func TestRunnerRefusesASecondConcurrentRun(t *testing.T) {
	h := startRunner(t)
	h.runner.Submit(planOutput(t, 1))
	c := h.next(t) // Run is running now
	if err := h.runner.Run(context.Background()); err == nil {
		t.Fatal("a second concurrent Run returned nil")
	}
	c.release <- nil
	<-h.results
}

func TestRunnerSubmitsFromManyGoroutinesEndWithTheLastOneChecked(t *testing.T) {
	h := startRunner(t)
	const n = 50
	outs := make([]*renderplan.Output, n)
	for i := range outs {
		outs[i] = planOutput(t, i)
	}
	var wg sync.WaitGroup
	for i := range n - 1 {
		wg.Go(func() { h.runner.Submit(outs[i]) })
	}
	wg.Wait()
	h.runner.Submit(outs[n-1])
	// Every submission ends as exactly one result; the last one submitted
	// is checked.
	seen := map[string]bool{}
	lastChecked := false
	for len(seen) < n {
		select {
		case c := <-h.checker.calls:
			lastChecked = lastChecked || c.id == outs[n-1].Plan.ID()
			c.release <- nil
		case res := <-h.results:
			if seen[res.PlanID] {
				t.Fatalf("two results for plan %s", res.PlanID)
			}
			seen[res.PlanID] = true
		}
	}
	if !lastChecked {
		t.Fatal("the last submitted plan was not checked")
	}
}

func TestNewRunnerRequiresCheckerAndOnResult(t *testing.T) {
	for name, cfg := range map[string]rendergate.RunnerConfig{
		"no checker":       {OnResult: func(rendergate.Result) {}},
		"no on-result":     {Checker: newFakeChecker()},
		"negative spacing": {Checker: newFakeChecker(), OnResult: func(rendergate.Result) {}, Spacing: -time.Second},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := rendergate.NewRunner(cfg); err == nil {
				t.Fatal("NewRunner accepted the config")
			}
		})
	}
}

// expectPassSupersededPass takes the next three results and wants first
// passed, second superseded and third passed.
func (h *runnerHarness) expectPassSupersededPass(t *testing.T, first, second, third *renderplan.Output) {
	t.Helper()
	want := []gotResult{
		{PlanID: first.Plan.ID(), Verdict: rendergate.VerdictPass},
		{PlanID: second.Plan.ID(), Superseded: true},
		{PlanID: third.Plan.ID(), Verdict: rendergate.VerdictPass},
	}
	if diff := cmp.Diff(want, h.take(t, len(want))); diff != "" {
		t.Fatalf("results (-want +got):\n%s", diff)
	}
}

func TestRunnerSpacedChecksCoverTheNewestOutputAfterTheSpacing(t *testing.T) {
	const spacing = time.Second
	h := startSpacedRunner(t, spacing)
	o1, o2, o3 := planOutput(t, 1), planOutput(t, 2), planOutput(t, 3)

	h.runner.Submit(o1)
	c1 := h.next(t) // the first check starts at once
	c1.release <- nil
	ended := time.Now()
	// Both land while the runner rests, so only the newer is checked.
	h.runner.Submit(o2)
	h.runner.Submit(o3)
	c3 := h.next(t)
	if rested := time.Since(ended); rested < spacing {
		t.Errorf("the next check started %v after the last one ended, want at least %v", rested, spacing)
	}
	if c3.id != o3.Plan.ID() {
		t.Fatalf("check of plan %s after the spacing, want the newest %s", c3.id, o3.Plan.ID())
	}
	c3.release <- nil
	h.expectPassSupersededPass(t, o1, o2, o3)
}

func TestRunnerUrgentOutputSkipsTheSpacing(t *testing.T) {
	h := startSpacedRunner(t, time.Hour)
	o1, o2, o3 := planOutput(t, 1), planOutput(t, 2), planOutput(t, 3)

	h.runner.Submit(o1)
	h.next(t).release <- nil
	h.runner.Submit(o2) // would wait an hour
	h.runner.SubmitUrgent(o3)
	c3 := h.next(t)
	if c3.id != o3.Plan.ID() {
		t.Fatalf("check of plan %s, want the urgent %s", c3.id, o3.Plan.ID())
	}
	c3.release <- nil
	h.expectPassSupersededPass(t, o1, o2, o3)
}

func TestRunnerWaitingOutputStaysUrgentWhenReplaced(t *testing.T) {
	h := startSpacedRunner(t, time.Hour)
	o1, o2, o3 := planOutput(t, 1), planOutput(t, 2), planOutput(t, 3)

	h.runner.Submit(o1)
	c1 := h.next(t)
	h.runner.SubmitUrgent(o2)
	h.runner.Submit(o3) // replaces the urgent o2 while o1 is checked
	c1.release <- nil
	if c := h.next(t); c.id != o3.Plan.ID() {
		t.Fatalf("check of plan %s, want %s at once", c.id, o3.Plan.ID())
	} else {
		c.release <- nil
	}
}

func TestRunnerStopsWhileResting(t *testing.T) {
	h := startSpacedRunner(t, time.Hour)
	h.runner.Submit(planOutput(t, 1))
	h.next(t).release <- nil
	h.runner.Submit(planOutput(t, 2))
	if err := h.stop(); !errors.Is(err, context.Canceled) {
		t.Fatalf("Run returned %v, want context.Canceled", err)
	}
}
