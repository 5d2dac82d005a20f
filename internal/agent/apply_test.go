package agent_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/haptic-io/haptic/agentapi"
	"github.com/haptic-io/haptic/deployplan"
	"github.com/haptic-io/haptic/internal/haproxytest"
	"github.com/haptic-io/haptic/renderplan"
)

// TestBootstrapAnswers503UntilTheFirstPlanLands starts HAProxy on the
// bootstrap config, then a full apply makes the first route serve.
func TestBootstrapAnswers503UntilTheFirstPlanLands(t *testing.T) {
	s := startSite(t, "3.4")
	echo := haproxytest.StartEcho(t, "api-a")
	if code, _ := s.get(t, "api.example.com"); code != 503 {
		t.Fatalf("bootstrap answered %d, want 503", code)
	}
	a := s.newAgent(t, nil)
	out := s.build(t, world{routes: []route{{"api.example.com", "be_api", []renderplan.Server{server("api-a", echo)}}}})
	res := mustApply(t, a, fullRequest(out, 1))
	if !res.Reload.Performed || !res.Reload.OK || res.Reload.NewWorkerPID == 0 {
		t.Fatalf("reload info %+v, want a performed, verified reload", res.Reload)
	}
	if code, body := s.get(t, "api.example.com"); code != 200 || body != "api-a\n" {
		t.Fatalf("GET api.example.com = %d %q, want 200 from api-a", code, body)
	}
	if diff := cmp.Diff(outFiles(out), treeFiles(t, s.dir)); diff != "" {
		t.Errorf("tree differs from the plan's files (-want +got):\n%s", diff)
	}
	st, err := a.State(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st.AppliedPlanID != out.Plan.ID() || st.LastKnownGoodPlanID != out.Plan.ID() || st.Fence != 1 || st.Drifted {
		t.Errorf("state applied=%q lkg=%q fence=%d drifted=%v, want %q twice, fence 1, no drift",
			st.AppliedPlanID, st.LastKnownGoodPlanID, st.Fence, st.Drifted, out.Plan.ID())
	}
	if !strings.HasPrefix(st.HAProxyVersion, "3.4") || st.Worker.PID != res.Reload.NewWorkerPID {
		t.Errorf("state haproxy %q worker %d, want 3.4.x and pid %d", st.HAProxyVersion, st.Worker.PID, res.Reload.NewWorkerPID)
	}
}

// TestRouteAddOn34RunsOpsWithoutReloadAndServesAtOnce is test 1.
func TestRouteAddOn34RunsOpsWithoutReloadAndServesAtOnce(t *testing.T) {
	s := startSite(t, "3.4")
	a := s.newAgent(t, nil)
	add := addShopRoute(t, s, a)
	next, req := add.next, add.req
	if code, _ := s.get(t, "shop.example.com"); code != 404 {
		t.Fatalf("shop before the route add answered %d, want 404", code)
	}
	reloads := s.reloads(t)
	res := mustApply(t, a, req)
	if code, body := s.get(t, "shop.example.com"); code != 200 || body != "shop-a\n" {
		t.Fatalf("GET shop.example.com right after the apply = %d %q, want 200 from shop-a", code, body)
	}
	if res.Reload.Performed || res.Reload.Scheduled {
		t.Errorf("reload info %+v, want none", res.Reload)
	}
	if got := s.reloads(t); got != reloads {
		t.Errorf("master reload counter went from %d to %d, want unchanged", reloads, got)
	}
	if len(res.Ops) != len(req.Ops) {
		t.Errorf("%d op results for %d ops", len(res.Ops), len(req.Ops))
	}
	for _, r := range res.Ops {
		if !r.OK {
			t.Errorf("op %d %s refused: %s", r.Index, r.Op, r.Reply)
		}
	}
	if diff := cmp.Diff(outFiles(next), treeFiles(t, s.dir)); diff != "" {
		t.Errorf("tree differs from the plan's files (-want +got):\n%s", diff)
	}
}

// TestEndpointChurnIsRuntimeOnEverySeries is test 2: servers replaced on
// 3.0, 3.2 and 3.4 without a reload; traffic follows at once.
func TestEndpointChurnIsRuntimeOnEverySeries(t *testing.T) {
	haproxytest.ForEachSeries(t, func(t *testing.T, series string) {
		s := startSite(t, series)
		e1, e2, e3 := haproxytest.StartEcho(t, "pod-1"), haproxytest.StartEcho(t, "pod-2"), haproxytest.StartEcho(t, "pod-3")
		a := s.newAgent(t, nil)
		w := world{routes: []route{{"api.example.com", "be_api", []renderplan.Server{server("pod-1", e1)}}}}
		prev := s.build(t, w)
		mustApply(t, a, fullRequest(prev, 1))
		reloads := s.reloads(t)
		for i, servers := range [][]renderplan.Server{
			{server("pod-2", e2)},
			{server("pod-2", e2), server("pod-3", e3)},
			{server("pod-3", e3)},
		} {
			w.routes[0].servers = servers
			next := s.build(t, w)
			req, d := diffRequest(t, s, prev, next, uint64(2+i))
			if d.Verdict != deployplan.VerdictRuntime {
				t.Fatalf("step %d: verdict %s, want runtime:\n%s", i, d.Verdict, d)
			}
			mustApply(t, a, req)
			want := map[string]bool{}
			for _, srv := range servers {
				want[srv.Name+"\n"] = true
			}
			seen := map[string]bool{}
			for range 3 * len(servers) {
				code, body := s.get(t, "api.example.com")
				if code != 200 || !want[body] {
					t.Fatalf("step %d: GET = %d %q, want 200 from one of %v", i, code, body, servers)
				}
				seen[body] = true
			}
			if len(seen) != len(want) {
				t.Errorf("step %d: round robin reached %v, want all of %v", i, seen, want)
			}
			prev = next
		}
		if got := s.reloads(t); got != reloads {
			t.Errorf("master reload counter went from %d to %d, want unchanged", reloads, got)
		}
	})
}

// TestBrokenConfigIsRefusedWithHAProxysAlertAndTheOldWorkerServes is
// test 3.
func TestBrokenConfigIsRefusedWithHAProxysAlertAndTheOldWorkerServes(t *testing.T) {
	s := startSite(t, "3.4")
	echo := haproxytest.StartEcho(t, "api-a")
	a := s.newAgent(t, nil)
	w := world{routes: []route{{"api.example.com", "be_api", []renderplan.Server{server("api-a", echo)}}}}
	good := s.build(t, w)
	mustApply(t, a, fullRequest(good, 1))
	w.extra = "    this_is_not_a_keyword on\n"
	w.general = map[string]string{"errors.txt": "new file\n"}
	bad := s.build(t, w)
	req, d := diffRequest(t, s, good, bad, 2)
	if d.Verdict != deployplan.VerdictReload {
		t.Fatalf("verdict %s, want reload", d.Verdict)
	}
	res, err := a.Apply(context.Background(), req)
	nack := nackStage(t, err)
	if nack.Stage != agentapi.StageReload || !strings.Contains(nack.Message, "[ALERT]") || !strings.Contains(nack.Message, "this_is_not_a_keyword") {
		t.Fatalf("nack %+v, want stage reload with HAProxy's [ALERT] about the keyword", nack)
	}
	if res == nil || res.OK || !res.Rollback.Performed || !res.Rollback.OK || nack.Result != res {
		t.Fatalf("result %+v, want a NACK with a successful rollback, carried by the NackError", res)
	}
	if code, body := s.get(t, "api.example.com"); code != 200 || body != "api-a\n" {
		t.Errorf("old worker: GET = %d %q, want 200 from api-a", code, body)
	}
	if diff := cmp.Diff(outFiles(good), treeFiles(t, s.dir)); diff != "" {
		t.Errorf("tree is not back to the last-known-good files (-want +got):\n%s", diff)
	}
	st, _ := a.State(context.Background())
	if st.AppliedPlanID != good.Plan.ID() || st.LastApply == nil || st.LastApply.Stage != agentapi.StageReload {
		t.Errorf("state applied=%q last apply %+v, want the good plan and the reload NACK", st.AppliedPlanID, st.LastApply)
	}
	// The pod still takes the good plan's successor.
	w.extra, w.general = "", nil
	w.routes[0].host = "api2.example.com"
	fixed := s.build(t, w)
	req, _ = diffRequest(t, s, good, fixed, 3)
	mustApply(t, a, req)
	if code, _ := s.get(t, "api2.example.com"); code != 200 {
		t.Errorf("after the fix: GET api2 = %d, want 200", code)
	}
}

// TestRefusedRuntimeOpFallsBackToAReloadOfTheNewFiles is test 4, first
// half: an op HAProxy refuses (its server vanished behind the agent's
// back) makes the agent reload onto the new files, which carry the whole
// new state.
func TestRefusedRuntimeOpFallsBackToAReloadOfTheNewFiles(t *testing.T) {
	s := startSite(t, "3.4")
	e1, e2 := haproxytest.StartEcho(t, "pod-1"), haproxytest.StartEcho(t, "pod-2")
	a := s.newAgent(t, nil)
	w := world{routes: []route{{"api.example.com", "be_api", []renderplan.Server{server("pod-1", e1), server("pod-2", e2)}}}}
	prev := s.build(t, w)
	mustApply(t, a, fullRequest(prev, 1))
	s.cmd(t, "set server be_api/pod-1 state maint")
	if out := s.cmd(t, "del server be_api/pod-1"); !strings.Contains(out, "Server deleted") {
		t.Fatalf("del server: %q", out)
	}
	w.routes[0].servers[0].Weight = 7
	next := s.build(t, w)
	req, d := diffRequest(t, s, prev, next, 2)
	if d.Verdict != deployplan.VerdictRuntime {
		t.Fatalf("verdict %s, want runtime", d.Verdict)
	}
	reloads := s.reloads(t)
	res := mustApply(t, a, req)
	if !res.Reload.Performed || !res.Reload.OK || !strings.HasPrefix(res.Reload.Reason, "fallback: op 0") {
		t.Fatalf("reload %+v, want a fallback reload after op 0", res.Reload)
	}
	if n := len(res.Ops); n != 1 || res.Ops[0].OK || !strings.Contains(res.Ops[0].Reply, "No such server") {
		t.Errorf("op results %+v, want one refused op with HAProxy's reply", res.Ops)
	}
	if got := s.reloads(t); got != reloads+1 {
		t.Errorf("reloads %d → %d, want one", reloads, got)
	}
	state := s.cmd(t, "show servers state be_api")
	if !strings.Contains(state, "pod-1") || !strings.Contains(state, "pod-2") {
		t.Errorf("after the fallback reload the backend lacks a server:\n%s", state)
	}
	if got := s.cmd(t, "get weight be_api/pod-1"); !strings.HasPrefix(got, "7 ") {
		t.Errorf("get weight be_api/pod-1 = %q, want 7", got)
	}
}

// TestRefusedOpWithAFailingFallbackRestoresTheOldSet is test 4, second
// half: the op is refused and the fallback reload fails too, so the
// agent restores the old files, reloads onto them (ops may have run) and
// NACKs; HAProxy serves the old set.
func TestRefusedOpWithAFailingFallbackRestoresTheOldSet(t *testing.T) {
	s := startSite(t, "3.4")
	e1 := haproxytest.StartEcho(t, "pod-1")
	a := s.newAgent(t, nil)
	w := world{routes: []route{{"api.example.com", "be_api", []renderplan.Server{server("pod-1", e1)}}}}
	prev := s.build(t, w)
	mustApply(t, a, fullRequest(prev, 1))
	w.extra = "    this_is_not_a_keyword on\n"
	broken := s.build(t, w)
	// A runtime request as a confused planner might send: a map entry that
	// HAProxy accepts, then an op it refuses, with files that do not load.
	req := &agentapi.ApplyRequest{PlanID: broken.Plan.ID(), Fence: 2, Verdict: agentapi.VerdictRuntime,
		Files: broken.Plan.Files, Bodies: map[string][]byte{"haproxy.cfg": broken.Files[0].Body},
		Ops: []agentapi.Op{
			{Kind: agentapi.OpAddMapEntry, Map: "maps/hosts.map", Key: "x.example.com", Value: "be_api"},
			{Kind: agentapi.OpSetServerWeight, Backend: "be_api", Server: "nope", Weight: 3},
		}}
	if broken.Files[0].Path != "haproxy.cfg" {
		t.Fatalf("first file is %s", broken.Files[0].Path)
	}
	res, err := a.Apply(context.Background(), req)
	nack := nackStage(t, err)
	if nack.Stage != agentapi.StageReload || !strings.Contains(nack.Message, "this_is_not_a_keyword") {
		t.Fatalf("nack %+v, want the fallback reload's ALERT", nack)
	}
	if !res.Rollback.Performed || !res.Rollback.OK {
		t.Fatalf("rollback %+v, want performed and ok", res.Rollback)
	}
	if diff := cmp.Diff(outFiles(prev), treeFiles(t, s.dir)); diff != "" {
		t.Errorf("tree is not the old set (-want +got):\n%s", diff)
	}
	// The map entry the first op added is gone: HAProxy reloaded onto
	// the restored files.
	if code, _ := s.get(t, "x.example.com"); code != 404 {
		t.Errorf("GET x.example.com = %d, want 404 (runtime state restored)", code)
	}
	if code, body := s.get(t, "api.example.com"); code != 200 || body != "pod-1\n" {
		t.Errorf("GET api = %d %q, want 200 pod-1", code, body)
	}
}

// TestRuntimeOpsWhoseFilesCannotBeStagedAreUndoneByAReload: a runtime
// apply runs its ops before it writes a file, so when the staging then
// fails HAProxy already serves the new route; the agent reloads onto the
// unchanged tree and NACKs at the files stage, and the next apply lands.
func TestRuntimeOpsWhoseFilesCannotBeStagedAreUndoneByAReload(t *testing.T) {
	s := startSite(t, "3.4")
	a := s.newAgent(t, nil)
	add := addShopRoute(t, s, a)
	prev, req := add.prev, add.req
	// A file where the staging directory goes: every staged write fails.
	txnDir := filepath.Join(s.dir, ".haptic-txn")
	if err := os.RemoveAll(txnDir); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(txnDir, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	reloads := s.reloads(t)
	res, err := a.Apply(context.Background(), req)
	nack := nackStage(t, err)
	if nack.Stage != agentapi.StageFiles {
		t.Fatalf("nack %+v, want the files stage", nack)
	}
	if len(res.Ops) != len(req.Ops) {
		t.Errorf("%d op results for %d ops: the ops should have run before the staging", len(res.Ops), len(req.Ops))
	}
	if !res.Rollback.Performed || !res.Rollback.OK {
		t.Errorf("rollback %+v, want a reload onto the unchanged tree", res.Rollback)
	}
	if got := s.reloads(t); got != reloads+1 {
		t.Errorf("reloads %d → %d, want one", reloads, got)
	}
	if code, _ := s.get(t, "shop.example.com"); code != 404 {
		t.Errorf("GET shop.example.com = %d, want 404 (the ops were undone)", code)
	}
	if code, body := s.get(t, "api.example.com"); code != 200 || body != "api-a\n" {
		t.Errorf("GET api = %d %q, want 200 api-a", code, body)
	}
	if diff := cmp.Diff(outFiles(prev), treeFiles(t, s.dir)); diff != "" {
		t.Errorf("tree is not the old set (-want +got):\n%s", diff)
	}
	if opsMarkLeft(t, s.dir) {
		t.Error("the ops mark is left after the restore")
	}

	if err := os.Remove(txnDir); err != nil {
		t.Fatal(err)
	}
	req.Fence = 3
	mustApply(t, a, req)
	if code, body := s.get(t, "shop.example.com"); code != 200 || body != "shop-a\n" {
		t.Errorf("GET shop.example.com after the retry = %d %q, want 200 shop-a", code, body)
	}
}

// TestFencingRefusesStaleTokensAndWrongPlansWithoutWriting is test 7.
func TestFencingRefusesStaleTokensAndWrongPlansWithoutWriting(t *testing.T) {
	s := startSite(t, "3.4")
	echo := haproxytest.StartEcho(t, "api-a")
	a := s.newAgent(t, nil)
	w := world{routes: []route{{"api.example.com", "be_api", []renderplan.Server{server("api-a", echo)}}}}
	base := s.build(t, w)
	mustApply(t, a, fullRequest(base, 5))
	w.routes[0].host = "other.example.com"
	next := s.build(t, w)
	before := treeFiles(t, s.dir)
	reloads := s.reloads(t)

	stale := fullRequest(next, 4)
	wrongPrev, _ := diffRequest(t, s, base, next, 6)
	wrongPrev.ExpectedPlanID = "not-the-plan"
	for name, req := range map[string]*agentapi.ApplyRequest{"stale token": stale, "wrong previous plan": wrongPrev} {
		t.Run(name, func(t *testing.T) {
			_, err := a.Apply(context.Background(), req)
			nack := nackStage(t, err)
			if nack.Stage != agentapi.StageFence || nack.HTTPStatus() != 409 {
				t.Fatalf("nack %+v, want stage fence (409)", nack)
			}
			if diff := cmp.Diff(before, treeFiles(t, s.dir)); diff != "" {
				t.Errorf("the tree changed (-before +after):\n%s", diff)
			}
		})
	}
	if got := s.reloads(t); got != reloads {
		t.Errorf("reloads %d → %d, want none", reloads, got)
	}
	// The same token again is fine: it is not older than the newest.
	req, _ := diffRequest(t, s, base, next, 5)
	mustApply(t, a, req)
}

// TestRevertLKGRestoresTheLastSetHAProxyLoaded: a plan applied with a
// reload becomes last-known-good; a later runtime apply does not (HAProxy
// never parsed its files), so revert_lkg goes back to the reloaded set and
// reloads onto it.
func TestRevertLKGRestoresTheLastSetHAProxyLoaded(t *testing.T) {
	s := startSite(t, "3.4")
	a := s.newAgent(t, nil)
	add := addShopRoute(t, s, a)
	good, next := add.prev, add.next
	mustApply(t, a, add.req)
	st, _ := a.State(context.Background())
	if st.AppliedPlanID != next.Plan.ID() || st.LastKnownGoodPlanID != good.Plan.ID() {
		t.Fatalf("after the runtime apply: applied %q lkg %q, want %q and %q", st.AppliedPlanID, st.LastKnownGoodPlanID, next.Plan.ID(), good.Plan.ID())
	}
	if code, _ := s.get(t, "shop.example.com"); code != 200 {
		t.Fatalf("GET shop = %d, want 200", code)
	}
	res := mustApply(t, a, &agentapi.ApplyRequest{Mode: agentapi.ModeRevertLKG, Fence: 3})
	if res.PlanID != good.Plan.ID() || !res.Reload.Performed || !res.Reload.OK {
		t.Fatalf("revert result plan %q reload %+v, want %q and a reload", res.PlanID, res.Reload, good.Plan.ID())
	}
	if code, _ := s.get(t, "shop.example.com"); code != 404 {
		t.Errorf("GET shop = %d, want 404 after the revert", code)
	}
	if diff := cmp.Diff(outFiles(good), treeFiles(t, s.dir)); diff != "" {
		t.Errorf("tree is not the last-known-good set (-want +got):\n%s", diff)
	}
	st, _ = a.State(context.Background())
	if st.AppliedPlanID != good.Plan.ID() {
		t.Errorf("state applied %q, want %q", st.AppliedPlanID, good.Plan.ID())
	}
	_, err := a.Apply(context.Background(), &agentapi.ApplyRequest{Mode: agentapi.ModeRevertLKG, PlanID: "other", Fence: 4})
	var nack *agentapi.NackError
	if !errors.As(err, &nack) || nack.Stage != agentapi.StageFence {
		t.Errorf("revert_lkg to another plan: %v, want a fence NACK", err)
	}
}

// waitFor polls cond every 20 ms for at most d.
func waitFor(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if cond() {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("timed out after %v waiting for %s", d, what)
}

// TestTheStateCarriesABoundedPartOfABigApply: after an apply of many ops
// the state (read before every apply) names how many ops it had but
// carries only the first results; the apply's answer had them all.
func TestTheStateCarriesABoundedPartOfABigApply(t *testing.T) {
	s := startSite(t, "3.4")
	a := s.newAgent(t, nil)
	echo := haproxytest.StartEcho(t, "pod")
	w := world{routes: []route{{"api.example.com", "be_api", []renderplan.Server{server("pod", echo)}}}}
	prev := s.build(t, w)
	mustApply(t, a, fullRequest(prev, 1))
	for i := range 5 {
		w.routes = append(w.routes, route{fmt.Sprintf("r%d.example.com", i), fmt.Sprintf("be_r%d", i), []renderplan.Server{server("pod", echo)}})
	}
	next := s.build(t, w)
	req, d := diffRequest(t, s, prev, next, 2)
	if d.Verdict != deployplan.VerdictRuntime || len(req.Ops) <= agentapi.MaxStateOpResults {
		t.Fatalf("verdict %s with %d ops, want runtime with more than %d", d.Verdict, len(req.Ops), agentapi.MaxStateOpResults)
	}
	res := mustApply(t, a, req)
	if len(res.Ops) != len(req.Ops) {
		t.Fatalf("the apply answered %d op results for %d ops", len(res.Ops), len(req.Ops))
	}
	st, err := a.State(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st.LastApply == nil {
		t.Fatal("the state has no last apply")
	}
	if st.LastApplyOps != len(req.Ops) || len(st.LastApply.Ops) != agentapi.MaxStateOpResults {
		t.Fatalf("state: last apply %+v with %d of %d op results, want %d of %d", st.LastApply, len(st.LastApply.Ops), st.LastApplyOps, agentapi.MaxStateOpResults, len(req.Ops))
	}
	if st.LastApply.PlanID != next.Plan.ID() || !st.LastApply.OK {
		t.Errorf("state's last apply is plan %s ok=%v, want %s ok", st.LastApply.PlanID, st.LastApply.OK, next.Plan.ID())
	}
}
