package agent_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/haptic-io/haptic/agentapi"
	"github.com/haptic-io/haptic/internal/agent"
	"github.com/haptic-io/haptic/internal/haproxytest"
	"github.com/haptic-io/haptic/renderplan"
)

// TestPacingBoundsReloadsAndLosesNone is test 6: ten reload applies
// within about a second reload at most once per interval; every apply
// lands its files, the scheduled reload runs the latest, and its outcome
// shows in the state.
func TestPacingBoundsReloadsAndLosesNone(t *testing.T) {
	const interval = 400 * time.Millisecond
	s := startSite(t, "3.4")
	echo := haproxytest.StartEcho(t, "api-a")
	a := s.newAgent(t, func(c *agent.Config) { c.MinReloadInterval = interval })
	w := world{routes: []route{{"h0.example.com", "be_api", []renderplan.Server{server("api-a", echo)}}}}
	mustApply(t, a, fullRequest(s.build(t, w), 1))
	reloads := s.reloads(t)
	start := time.Now()
	var last *renderplan.Output
	scheduled := 0
	for i := 1; i <= 10; i++ {
		w.routes[0].host = fmt.Sprintf("h%d.example.com", i)
		last = s.build(t, w)
		res := mustApply(t, a, fullRequest(last, uint64(1+i)))
		if res.Reload.Scheduled {
			scheduled++
		}
		t.Logf("apply %d took %v (timings %v), reload %+v", i, res.Took, res.Timings, res.Reload)
		if diff := cmp.Diff(outFiles(last), treeFiles(t, s.dir)); diff != "" {
			t.Fatalf("apply %d: files did not land (-want +got):\n%s", i, diff)
		}
		time.Sleep(100 * time.Millisecond)
	}
	waitFor(t, 10*time.Second, "the scheduled reload", func() bool {
		st, err := a.State(context.Background())
		return err == nil && st.LastApply != nil && st.LastApply.Reload.Performed && st.LastApply.Reload.OK
	})
	elapsed := time.Since(start)
	got := s.reloads(t) - reloads
	limit := int(elapsed/interval) + 2
	t.Logf("10 applies in %v: %d reloads (limit %d), %d scheduled", elapsed, got, limit, scheduled)
	if got > limit || got < 1 {
		t.Errorf("%d reloads in %v with a %v interval, want 1..%d", got, elapsed, interval, limit)
	}
	if scheduled == 0 {
		t.Errorf("no apply was scheduled")
	}
	if code, _ := s.get(t, "h10.example.com"); code != 200 {
		t.Errorf("the last plan does not serve: GET h10 = %d", code)
	}
	if code, _ := s.get(t, "h9.example.com"); code != 404 {
		t.Errorf("an older plan still serves: GET h9 = %d", code)
	}
	st, _ := a.State(context.Background())
	if st.AppliedPlanID != last.Plan.ID() || st.LastKnownGoodPlanID != last.Plan.ID() {
		t.Errorf("state applied %q lkg %q, want %q", st.AppliedPlanID, st.LastKnownGoodPlanID, last.Plan.ID())
	}
}

// TestDriftMakesTheBaselineUnknownUntilAFullApply is test 10.
func TestDriftMakesTheBaselineUnknownUntilAFullApply(t *testing.T) {
	s := startSite(t, "3.4")
	echo := haproxytest.StartEcho(t, "api-a")
	a := s.newAgent(t, func(c *agent.Config) { c.DriftInterval = 30 * time.Millisecond })
	w := world{routes: []route{{"api.example.com", "be_api", []renderplan.Server{server("api-a", echo)}}}}
	out := s.build(t, w)
	mustApply(t, a, fullRequest(out, 1))
	if a.CheckDrift() {
		t.Fatal("drift right after an apply")
	}
	if err := os.WriteFile(filepath.Join(s.dir, "maps", "hosts.map"), []byte("evil.example.com be_api\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "the drift loop to notice", func() bool {
		st, err := a.State(context.Background())
		return err == nil && st.Drifted && st.AppliedPlanID == ""
	})
	w.routes[0].host = "next.example.com"
	next := s.build(t, w)
	req, _ := diffRequest(t, s, out, next, 2)
	_, err := a.Apply(context.Background(), req)
	if nack := nackStage(t, err); nack.Stage != agentapi.StageFence {
		t.Fatalf("incremental apply on a drifted tree: %+v, want a fence NACK", nack)
	}
	mustApply(t, a, fullRequest(next, 3))
	st, _ := a.State(context.Background())
	if st.Drifted || st.AppliedPlanID != next.Plan.ID() {
		t.Errorf("after the full apply: drifted %v applied %q", st.Drifted, st.AppliedPlanID)
	}
	if diff := cmp.Diff(outFiles(next), treeFiles(t, s.dir)); diff != "" {
		t.Errorf("tree not repaired (-want +got):\n%s", diff)
	}
	if code, _ := s.get(t, "next.example.com"); code != 200 {
		t.Errorf("GET next = %d, want 200", code)
	}
	// An extra file is drift too.
	if err := os.MkdirAll(filepath.Join(s.dir, "general"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(s.dir, "general", "extra"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if !a.CheckDrift() {
		t.Error("an added file is not drift")
	}
}

// TestAScheduledReloadSurvivesARestart: an apply whose reload the pacing
// deferred is committed with the reload owed; an agent restarted before
// the window opened runs it.
func TestAScheduledReloadSurvivesARestart(t *testing.T) {
	s := startSite(t, "3.4")
	echo := haproxytest.StartEcho(t, "api-a")
	cfg := s.config(t)
	cfg.MinReloadInterval = time.Minute
	first, err := agent.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	w := world{routes: []route{{"a.example.com", "be_api", []renderplan.Server{server("api-a", echo)}}}}
	mustApply(t, first, fullRequest(s.build(t, w), 1))
	w.routes[0].host = "b.example.com"
	next := s.build(t, w)
	if res := mustApply(t, first, fullRequest(next, 2)); !res.Reload.Scheduled {
		t.Fatalf("reload %+v, want scheduled", res.Reload)
	}
	_ = first.Close() // its Run never ran: the reload is still owed
	if code, _ := s.get(t, "b.example.com"); code != 404 {
		t.Fatalf("GET b before the restart = %d, want 404", code)
	}
	cfg.MinReloadInterval = -1
	second, err := agent.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	runAgent(t, second)
	waitFor(t, 10*time.Second, "the owed reload after the restart", func() bool {
		code, _, err := haproxytest.TryGet(s.url(), "b.example.com")
		return err == nil && code == 200
	})
	st, _ := second.State(context.Background())
	if st.AppliedPlanID != next.Plan.ID() {
		t.Errorf("applied %q, want %q", st.AppliedPlanID, next.Plan.ID())
	}
}

// TestAFailedScheduledReloadShowsInTheState: a paced reload of files
// HAProxy refuses is ACKed as scheduled; when it runs and fails, the state
// carries HAProxy's alert and an unknown baseline while the old worker
// serves, and a full apply repairs the pod.
func TestAFailedScheduledReloadShowsInTheState(t *testing.T) {
	s := startSite(t, "3.4")
	echo := haproxytest.StartEcho(t, "api-a")
	a := s.newAgent(t, func(c *agent.Config) { c.MinReloadInterval = 300 * time.Millisecond })
	w := world{routes: []route{{"api.example.com", "be_api", []renderplan.Server{server("api-a", echo)}}}}
	good := s.build(t, w)
	mustApply(t, a, fullRequest(good, 1))
	w.extra = "    this_is_not_a_keyword on\n"
	if res := mustApply(t, a, fullRequest(s.build(t, w), 2)); !res.Reload.Scheduled {
		t.Fatalf("reload %+v, want scheduled", res.Reload)
	}
	var st *agentapi.State
	waitFor(t, 10*time.Second, "the scheduled reload to fail", func() bool {
		st, _ = a.State(context.Background())
		return st != nil && st.LastApply != nil && st.LastApply.Reload.Performed
	})
	if st.LastApply.OK || st.LastApply.Stage != agentapi.StageReload || !strings.Contains(st.LastApply.Message, "this_is_not_a_keyword") {
		t.Errorf("last apply %+v, want the scheduled reload's NACK with HAProxy's alert", st.LastApply)
	}
	if st.AppliedPlanID != "" {
		t.Errorf("applied plan %q, want unknown after a failed scheduled reload", st.AppliedPlanID)
	}
	if code, body := s.get(t, "api.example.com"); code != 200 || body != "api-a\n" {
		t.Errorf("old worker: GET = %d %q", code, body)
	}
	w.extra = ""
	w.routes[0].host = "fixed.example.com"
	fixed := s.build(t, w)
	time.Sleep(300 * time.Millisecond) // let the pacing window open
	if res := mustApply(t, a, fullRequest(fixed, 3)); !res.Reload.Performed || !res.Reload.OK {
		t.Fatalf("repair reload %+v", res.Reload)
	}
	if code, _ := s.get(t, "fixed.example.com"); code != 200 {
		t.Errorf("GET fixed = %d, want 200", code)
	}
}

// TestTheFirstPlanReplacesTheBootstrapConfigAtOnce: a reload that just
// ran (here a refused first plan) does not hold the first good plan for
// the pacing window, since until it loads HAProxy answers every request
// with the bootstrap config's 503; with ReadyAfterPlan the agent is not
// Ready before it, and Ready once the plan serves.
func TestTheFirstPlanReplacesTheBootstrapConfigAtOnce(t *testing.T) {
	s := startSite(t, "3.4")
	echo := haproxytest.StartEcho(t, "api-a")
	a := s.newAgent(t, func(c *agent.Config) { c.MinReloadInterval = time.Minute; c.ReadyAfterPlan = true })
	ctx := context.Background()
	if err := a.Ready(ctx); err == nil {
		t.Fatal("Ready before any plan")
	}
	w := world{routes: []route{{"api.example.com", "be_api", []renderplan.Server{server("api-a", echo)}}}}
	w.extra = "    this_is_not_a_keyword on\n"
	_, err := a.Apply(ctx, fullRequest(s.build(t, w), 1))
	if nack := nackStage(t, err); nack.Stage != agentapi.StageReload {
		t.Fatalf("nack %+v, want stage reload", nack)
	}
	if err := a.Ready(ctx); err == nil {
		t.Fatal("Ready after a refused first plan")
	}
	w.extra = ""
	res := mustApply(t, a, fullRequest(s.build(t, w), 2))
	if res.Reload.Scheduled || !res.Reload.Performed || !res.Reload.OK {
		t.Fatalf("first good plan: reload %+v, want one performed now, not scheduled", res.Reload)
	}
	if err := a.Ready(ctx); err != nil {
		t.Errorf("not Ready once the first plan serves: %v", err)
	}
	if code, body := s.get(t, "api.example.com"); code != 200 || body != "api-a\n" {
		t.Errorf("GET = %d %q, want 200 from api-a", code, body)
	}
}
