package controller

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/haptic-io/haptic/agentapi"
	"github.com/haptic-io/haptic/rendergate"
	"github.com/haptic-io/haptic/renderplan"
)

// newTestLoop returns a loop over a channel source and one fake agent,
// without debouncing, and starts it.
func newTestLoop(t *testing.T, checker renderplan.Checker) (*Loop, *chanSource, *fakeAgent, *prometheus.Registry) {
	t.Helper()
	return newSpacedTestLoop(t, checker, 0)
}

// newSpacedTestLoop is newTestLoop with Config.CheckSpacing.
func newSpacedTestLoop(t *testing.T, checker renderplan.Checker, spacing time.Duration) (*Loop, *chanSource, *fakeAgent, *prometheus.Registry) {
	t.Helper()
	src, agent, reg := newChanSource(), newFakeAgent(), prometheus.NewRegistry()
	l, err := New(Config{
		Source:       src,
		Engine:       testEngine(t),
		Targets:      func() []Target { return []Target{{Name: "haproxy-0", Agent: agent}} },
		Checker:      checker,
		CheckSpacing: spacing,
		Log:          testLogger(t),
		Registerer:   reg,
	})
	if err != nil {
		t.Fatal(err)
	}
	runLoop(t, l)
	return l, src, agent, reg
}

func hostsMap(r *agentapi.ApplyRequest) string { return string(r.Bodies["maps/hosts.map"]) }

func TestLoopRendersOnlyAfterTheInitialListing(t *testing.T) {
	_, src, agent, _ := newTestLoop(t, nil)
	src.send(t, Event{Changes: []Change{upsert(route("a", "a.example", "127.0.0.1", 9001))}})
	src.send(t, Event{Changes: []Change{upsert(route("b", "b.example", "127.0.0.1", 9002))}})
	src.send(t, Event{Initialized: true})

	first := agent.next(t)
	if first.Verdict != agentapi.VerdictReload || first.ExpectedPlanID != "" {
		t.Errorf("first apply: %s, expected plan %q; want a full-state reload", describe(first), first.ExpectedPlanID)
	}
	if got, want := hostsMap(first), "a.example be_a\nb.example be_b\n"; got != want {
		t.Errorf("first apply's hosts.map = %q, want %q (both objects of the listing)", got, want)
	}
	agent.none(t)
}

func TestLoopAddsARouteWithRuntimeOpsOnly(t *testing.T) {
	_, src, agent, reg := newTestLoop(t, nil)
	src.send(t, Event{Changes: []Change{upsert(route("a", "a.example", "127.0.0.1", 9001))}, Initialized: true})
	first := agent.next(t)

	src.send(t, Event{Changes: []Change{upsert(route("b", "b.example", "127.0.0.1", 9002))}})
	second := agent.next(t)
	if second.Verdict != agentapi.VerdictRuntime || second.ExpectedPlanID != first.PlanID {
		t.Fatalf("second apply: %s expecting %q; want runtime expecting %q", describe(second), second.ExpectedPlanID, first.PlanID)
	}
	want := []string{"backend.add be_b", "server.add be_b/s1", "server.set_state be_b/s1", "backend.publish be_b", "map.add maps/hosts.map"}
	got := ops(second)
	for i := range got {
		got[i] = strings.Join(strings.Fields(got[i])[:2], " ")
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ops (-want +got):\n%s", diff)
	}
	eventually(t, "haptic_deploy_apply_total{mode=runtime} to count the apply", func() bool {
		return metricValue(t, reg, "haptic_deploy_apply_total", "haproxy-0", "runtime") == 1
	})
}

func TestLoopSendsTheFullStateAfterAnUnsupportedNack(t *testing.T) {
	_, src, agent, _ := newTestLoop(t, nil)
	src.send(t, Event{Changes: []Change{upsert(route("a", "a.example", "127.0.0.1", 9001))}, Initialized: true})
	agent.next(t)
	agent.mu.Lock()
	agent.nackNext = []*agentapi.NackError{{Stage: agentapi.StageDecode, Op: 0, Unsupported: true, Message: `op: unknown op kind "backend.add"`}}
	agent.mu.Unlock()

	src.send(t, Event{Changes: []Change{upsert(route("b", "b.example", "127.0.0.1", 9002))}})
	if r := agent.next(t); r.Verdict != agentapi.VerdictRuntime {
		t.Fatalf("planned apply: %s, want runtime", describe(r))
	}
	full := agent.next(t)
	if full.Mode != agentapi.ModeReload || len(full.Ops) != 0 || len(full.Bodies) != len(full.Files) {
		t.Errorf("fallback: %s with %d bodies for %d files; want mode reload, no ops, every body", describe(full), len(full.Bodies), len(full.Files))
	}
}

func TestLoopRereadsTheStateOnceAfterAFenceNack(t *testing.T) {
	l, src, agent, _ := newTestLoop(t, nil)
	src.send(t, Event{Changes: []Change{upsert(route("a", "a.example", "127.0.0.1", 9001))}, Initialized: true})
	agent.next(t)
	agent.mu.Lock()
	agent.nackNext = []*agentapi.NackError{{Stage: agentapi.StageFence, Op: -1, Message: "stale"}}
	agent.mu.Unlock()

	src.send(t, Event{Changes: []Change{upsert(route("b", "b.example", "127.0.0.1", 9002))}})
	agent.next(t)
	retry := agent.next(t)
	if retry.Verdict != agentapi.VerdictRuntime {
		t.Errorf("retry: %s, want runtime", describe(retry))
	}
	eventually(t, "the pod to run the new plan", func() bool { return l.Status().Pods["haproxy-0"] == retry.PlanID })
}

func TestLoopKeepsServingWhenTheTemplateFails(t *testing.T) {
	l, src, agent, reg := newTestLoop(t, nil)
	src.send(t, Event{Changes: []Change{upsert(route("a", "a.example", "127.0.0.1", 9001))}, Initialized: true})
	first := agent.next(t)

	src.send(t, Event{Changes: []Change{upsert(route("broken", "x.example", "127.0.0.1", 9001))}})
	eventually(t, "the render error in the status", func() bool {
		err := l.Status().LastError
		return err != nil && strings.Contains(err.Error(), "route default/broken breaks the template")
	})
	if n := metricValue(t, reg, "haptic_reconciliation_errors_total", "render"); n != 1 {
		t.Errorf("render errors = %v, want 1", n)
	}
	agent.none(t)

	src.send(t, Event{Changes: []Change{{Alias: "routes", Namespace: "default", Name: "broken"}}})
	eventually(t, "the error to clear", func() bool { return l.Status().LastError == nil })
	agent.none(t) // the plan is the one the pod runs
	if got := l.Status().Pods["haproxy-0"]; got != first.PlanID {
		t.Errorf("pod runs %q, want the first plan %q", got, first.PlanID)
	}
}

func TestLoopCountsSourceProblemsAndKeepsGoing(t *testing.T) {
	l, src, agent, reg := newTestLoop(t, nil)
	src.send(t, Event{Err: errors.New("manifest bad.yaml: not YAML"), Origin: "file bad.yaml"})
	src.send(t, Event{Changes: []Change{upsert(route("a", "a.example", "127.0.0.1", 9001))}, Initialized: true})
	agent.next(t)
	if n := metricValue(t, reg, "haptic_source_problems_total"); n != 1 {
		t.Errorf("haptic_source_problems_total = %v, want 1", n)
	}
	if got := l.Status().SourceProblems; got != 1 {
		t.Errorf("status source problems = %d, want 1", got)
	}
}

// refuseHost is a checker that refuses every output whose hosts.map names
// host, and passes the others.
func refuseHost(host string) renderplan.Checker {
	return renderplan.CheckerFunc(func(_ context.Context, out *renderplan.Output) error {
		for _, f := range out.Files {
			if f.Path == "maps/hosts.map" && strings.Contains(string(f.Body), host) {
				return &rendergate.CheckError{PlanID: out.Plan.ID(), ExitCode: 1, Reason: "refused " + host}
			}
		}
		return nil
	})
}

func TestGateRefusalRevertsThePodAndHoldsTheNextPlans(t *testing.T) {
	l, src, agent, reg := newTestLoop(t, refuseHost("bad.example"))
	src.send(t, Event{Changes: []Change{upsert(route("a", "a.example", "127.0.0.1", 9001))}, Initialized: true})
	good := agent.next(t)
	eventually(t, "the first plan to pass", func() bool {
		return metricValue(t, reg, "haptic_gate_verdicts_total", "pass") == 1
	})

	// Optimistic: the bad plan goes out at once, then the refusal reverts
	// the pod. The fake agent's last-known-good is the bad plan itself, so
	// the revert is the good plan's full state with a reload.
	src.send(t, Event{Changes: []Change{upsert(route("bad", "bad.example", "127.0.0.1", 9002))}})
	bad := agent.next(t)
	if bad.Verdict != agentapi.VerdictRuntime {
		t.Fatalf("bad plan: %s, want dispatched at runtime", describe(bad))
	}
	revert := agent.next(t)
	if revert.Mode != agentapi.ModeReload || revert.PlanID != good.PlanID {
		t.Fatalf("revert: %s to plan %q, want mode reload to the passed plan %q", describe(revert), revert.PlanID, good.PlanID)
	}
	eventually(t, "the refusal in the status", func() bool {
		s := l.Status()
		return s.GateLatched && s.Refused == bad.PlanID && s.RefusedReason == "refused bad.example"
	})
	eventually(t, "haptic_deploy_apply_total{mode=revert_lkg} to count the revert", func() bool {
		return metricValue(t, reg, "haptic_deploy_apply_total", "haproxy-0", "revert_lkg") == 1
	})

	// Latched: the next plan waits for its verdict, then goes out.
	src.send(t, Event{Changes: []Change{{Alias: "routes", Namespace: "default", Name: "bad"}, upsert(route("c", "c.example", "127.0.0.1", 9003))}})
	next := agent.next(t)
	if !strings.Contains(hostsMap(next)+strings.Join(ops(next), " "), "c.example") {
		t.Errorf("held plan: %s, want the route c.example", describe(next))
	}
	if n := metricValue(t, reg, "haptic_gate_verdicts_total", "pass"); n != 2 {
		t.Errorf("passes when the held plan went out = %v, want 2 (dispatched only after its check)", n)
	}
	eventually(t, "the gate to unlatch", func() bool { return !l.Status().GateLatched })
}

func TestHeldPlansAreCheckedWithoutWaitingForTheSpacing(t *testing.T) {
	// An hour's spacing: a check that waited for it would never come.
	l, src, agent, reg := newSpacedTestLoop(t, refuseHost("bad.example"), time.Hour)
	// Nothing was checked before, so the first plan is checked at once.
	src.send(t, Event{Changes: []Change{upsert(route("bad", "bad.example", "127.0.0.1", 9002))}, Initialized: true})
	bad := agent.next(t)
	eventually(t, "the refusal to latch the gate", func() bool {
		s := l.Status()
		return s.GateLatched && s.Refused == bad.PlanID
	})
	if revert := agent.next(t); revert.Mode != agentapi.ModeRevertLKG {
		t.Fatalf("revert: %s, want mode revert_lkg (no plan passed yet)", describe(revert))
	}

	src.send(t, Event{Changes: []Change{{Alias: "routes", Namespace: "default", Name: "bad"}, upsert(route("c", "c.example", "127.0.0.1", 9003))}})
	next := agent.next(t)
	if !strings.Contains(hostsMap(next)+strings.Join(ops(next), " "), "c.example") {
		t.Errorf("held plan: %s, want the route c.example", describe(next))
	}
	if n := metricValue(t, reg, "haptic_gate_verdicts_total", "pass"); n != 1 {
		t.Errorf("passes when the held plan went out = %v, want 1", n)
	}
}

func TestRevertUsesTheAgentsLastKnownGoodWhenItIsNotTheRefusedPlan(t *testing.T) {
	agent := newFakeAgent()
	agent.applied, agent.lkg = "refused", "older"
	d := newDispatcher(1, 0, testLogger(t), mustMetrics(t))
	results, err := d.revert(context.Background(), []Target{{Name: "p", Agent: agent}}, []string{"p"}, "refused", nil, "")
	if err != nil {
		t.Fatal(err)
	}
	r := agent.next(t)
	if r.Mode != agentapi.ModeRevertLKG || len(r.Files) != 0 {
		t.Errorf("revert request: %s, want mode revert_lkg without files", describe(r))
	}
	if results[0].PlanID != "older" {
		t.Errorf("pod runs %q after the revert, want older", results[0].PlanID)
	}
}

func TestNewNamesEveryMissingField(t *testing.T) {
	_, err := New(Config{Debounce: DebounceConfig{Interval: -1}})
	if err == nil {
		t.Fatal("New accepted an empty config")
	}
	for _, field := range []string{"Source", "Engine", "Targets", "Interval"} {
		if !strings.Contains(err.Error(), field) {
			t.Errorf("error %q does not name %s", err, field)
		}
	}
}

// metricValue returns the value of the counter or gauge name whose label
// values include labels (0 when there is none).
func metricValue(t *testing.T, reg *prometheus.Registry, name string, labels ...string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			var vals []string
			for _, lp := range m.GetLabel() {
				vals = append(vals, lp.GetValue())
			}
			if containsAll(vals, labels) {
				return m.GetCounter().GetValue() + m.GetGauge().GetValue()
			}
		}
	}
	return 0
}

func containsAll(have, want []string) bool {
	for _, w := range want {
		found := false
		for _, h := range have {
			if h == w {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	return true
}

func mustMetrics(t *testing.T) *metrics {
	t.Helper()
	m, err := newMetrics(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// pausingChecker is a passing Checker that is also a rendergate.Pauser
// and counts how deep it is paused.
type pausingChecker struct {
	depth, pauses atomic.Int32
}

func (c *pausingChecker) Check(context.Context, *renderplan.Output) error { return nil }
func (c *pausingChecker) Pause()                                          { c.depth.Add(1); c.pauses.Add(1) }
func (c *pausingChecker) Resume()                                         { c.depth.Add(-1) }

func TestLoopPausesTheCheckerForEachReconciliation(t *testing.T) {
	checker := &pausingChecker{}
	var during []int32 // the depth while each reconciliation asks for its targets
	var mu sync.Mutex
	src, agent := newChanSource(), newFakeAgent()
	l, err := New(Config{
		Source: src,
		Engine: testEngine(t),
		Targets: func() []Target {
			mu.Lock()
			during = append(during, checker.depth.Load())
			mu.Unlock()
			return []Target{{Name: "haproxy-0", Agent: agent}}
		},
		Checker:    checker,
		Log:        testLogger(t),
		Registerer: prometheus.NewRegistry(),
	})
	if err != nil {
		t.Fatal(err)
	}
	runLoop(t, l)
	src.send(t, Event{Changes: []Change{upsert(route("a", "a.example", "127.0.0.1", 9001))}, Initialized: true})
	agent.next(t)
	src.send(t, Event{Changes: []Change{upsert(route("b", "b.example", "127.0.0.1", 9002))}})
	agent.next(t)
	eventually(t, "the checker to be resumed after both reconciliations", func() bool {
		return checker.depth.Load() == 0 && checker.pauses.Load() >= 2
	})
	mu.Lock()
	defer mu.Unlock()
	for i, d := range during {
		if d != 1 {
			t.Errorf("reconciliation %d ran with the checker paused %d deep, want 1", i, d)
		}
	}
}

func TestTimingsTextListsTheStagesThatRanInTransactionOrder(t *testing.T) {
	got := timingsText(map[agentapi.Stage]time.Duration{
		agentapi.StageOps:    1104 * time.Microsecond,
		agentapi.StageFence:  31 * time.Microsecond,
		agentapi.StageCommit: 2500*time.Microsecond + 400*time.Nanosecond,
	})
	if want := "fence=31µs ops=1.104ms commit=2.5ms"; got != want {
		t.Fatalf("timingsText = %q, want %q", got, want)
	}
}

// directSource hands the loop's event channel to the test, which then
// queues events itself: a send returns once the event waits in the loop's
// queue.
type directSource struct{ events chan chan<- Event }

func (s *directSource) Run(ctx context.Context, events chan<- Event) error {
	s.events <- events
	<-ctx.Done()
	return ctx.Err()
}

// holdingAgent is a fakeAgent whose next apply, once hold is called,
// waits until the test releases it.
type holdingAgent struct {
	*fakeAgent
	mu      sync.Mutex
	held    chan struct{} // closed by release; nil: applies run through
	entered chan struct{}
}

func (a *holdingAgent) hold() {
	a.mu.Lock()
	a.held = make(chan struct{})
	a.mu.Unlock()
}

func (a *holdingAgent) release() {
	a.mu.Lock()
	close(a.held)
	a.held = nil
	a.mu.Unlock()
}

func (a *holdingAgent) Apply(ctx context.Context, req *agentapi.ApplyRequest) (*agentapi.ApplyResult, error) {
	a.mu.Lock()
	held := a.held
	a.mu.Unlock()
	if held != nil {
		a.entered <- struct{}{}
		<-held
	}
	return a.fakeAgent.Apply(ctx, req)
}

func TestLoopCoalescesTheChangesThatArriveDuringAReconciliationIntoOneFollowUp(t *testing.T) {
	src := &directSource{events: make(chan chan<- Event, 1)}
	agent := &holdingAgent{fakeAgent: newFakeAgent(), entered: make(chan struct{}, 1)}
	l, err := New(Config{
		Source:     src,
		Engine:     testEngine(t),
		Targets:    func() []Target { return []Target{{Name: "haproxy-0", Agent: agent}} },
		Log:        testLogger(t),
		Registerer: prometheus.NewRegistry(),
	})
	if err != nil {
		t.Fatal(err)
	}
	runLoop(t, l)
	events := <-src.events
	send := func(ev Event) {
		t.Helper()
		select {
		case events <- ev:
		case <-time.After(waitTimeout):
			t.Fatal("the loop does not take events")
		}
	}
	send(Event{Changes: []Change{upsert(route("a", "a.example", "127.0.0.1", 9001))}, Initialized: true})
	agent.next(t)

	// b finds the loop idle and is reconciled at once; c, d and e come
	// while that reconciliation's apply runs.
	agent.hold()
	send(Event{Changes: []Change{upsert(route("b", "b.example", "127.0.0.1", 9002))}})
	select {
	case <-agent.entered:
	case <-time.After(waitTimeout):
		t.Fatal("the change of b was not applied")
	}
	for i, name := range []string{"c", "d", "e"} {
		send(Event{Changes: []Change{upsert(route(name, name+".example", "127.0.0.1", 9003+i))}})
	}
	agent.release()
	if b := agent.next(t); !strings.Contains(strings.Join(ops(b), " "), "b.example") {
		t.Errorf("apply of b: %s, want the route b.example", describe(b))
	}
	follow := agent.next(t)
	for _, host := range []string{"c.example", "d.example", "e.example"} {
		if !strings.Contains(strings.Join(ops(follow), " "), host) {
			t.Errorf("follow-up %s lacks %s: want the three changes in one reconciliation", describe(follow), host)
		}
	}

	// Nothing else was pending: the next change is the fourth
	// reconciliation.
	send(Event{Changes: []Change{upsert(route("f", "f.example", "127.0.0.1", 9006))}})
	agent.next(t)
	if n := l.Status().Reconciliations; n != 4 {
		t.Errorf("%d reconciliations for the listing, b, c–e and f, want 4", n)
	}
}
