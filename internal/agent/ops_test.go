package agent_test

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/haptic-io/haptic/agentapi"
	"github.com/haptic-io/haptic/deployplan"
	"github.com/haptic-io/haptic/internal/agent"
	"github.com/haptic-io/haptic/internal/haproxytest"
	"github.com/haptic-io/haptic/renderplan"
)

// cumConns returns HAProxy's count of accepted connections, stats socket
// connections included ("show info" CumConns, which counts its own).
func (s *site) cumConns(t testing.TB) int {
	t.Helper()
	for _, l := range strings.Split(s.cmd(t, "show info"), "\n") {
		if v, ok := strings.CutPrefix(l, "CumConns: "); ok {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatal("show info has no CumConns")
	return 0
}

// TestAnApplysOpsShareOneStatsSocketConnection: an apply of several ops
// opens one stats socket connection, not one per op, on every series.
func TestAnApplysOpsShareOneStatsSocketConnection(t *testing.T) {
	haproxytest.ForEachSeries(t, func(t *testing.T, series string) {
		s := startSite(t, series)
		e1, e2, e3 := haproxytest.StartEcho(t, "pod-1"), haproxytest.StartEcho(t, "pod-2"), haproxytest.StartEcho(t, "pod-3")
		a := s.newAgent(t, nil)
		w := world{routes: []route{{"api.example.com", "be_api", []renderplan.Server{server("pod-1", e1)}}}}
		prev := s.build(t, w)
		mustApply(t, a, fullRequest(prev, 1))
		w.routes[0].servers = []renderplan.Server{server("pod-2", e2), server("pod-3", e3)}
		next := s.build(t, w)
		req, d := diffRequest(t, s, prev, next, 2)
		if d.Verdict != deployplan.VerdictRuntime || len(req.Ops) < 3 {
			t.Fatalf("verdict %s with %d ops, want runtime with at least 3:\n%s", d.Verdict, len(req.Ops), d)
		}
		before := s.cumConns(t)
		res := mustApply(t, a, req)
		after := s.cumConns(t)
		for _, r := range res.Ops {
			if !r.OK {
				t.Fatalf("op %d %s refused: %s", r.Index, r.Op, r.Reply)
			}
		}
		// One for the apply's session, one for the second "show info".
		if got := after - before; got != 2 {
			t.Errorf("%d ops opened %d stats socket connections, want 1", len(req.Ops), got-1)
		}
		if code, _ := s.get(t, "api.example.com"); code != 200 {
			t.Errorf("GET after the apply = %d, want 200", code)
		}
	})
}

// TestARuntimeApplyWhoseStatsSocketCannotBeDialledFallsBackToAReload: the
// session the ops run on is dialled while the files are staged; when that
// fails the first op reports why and the apply reloads onto the new
// files, as for any refused op.
func TestARuntimeApplyWhoseStatsSocketCannotBeDialledFallsBackToAReload(t *testing.T) {
	s := startSite(t, "3.4")
	e1, e2 := haproxytest.StartEcho(t, "pod-1"), haproxytest.StartEcho(t, "pod-2")
	first, err := agent.New(s.config(t))
	if err != nil {
		t.Fatal(err)
	}
	w := world{routes: []route{{"api.example.com", "be_api", []renderplan.Server{server("pod-1", e1)}}}}
	prev := s.build(t, w)
	mustApply(t, first, fullRequest(prev, 1))
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	// The same tree under an agent whose stats socket path is wrong.
	a := s.newAgent(t, func(c *agent.Config) { c.StatsSocket = filepath.Join(s.dir, "missing.sock") })
	w.routes[0].servers = append(w.routes[0].servers, server("pod-2", e2))
	next := s.build(t, w)
	req, d := diffRequest(t, s, prev, next, 2)
	if d.Verdict != deployplan.VerdictRuntime {
		t.Fatalf("verdict %s, want runtime", d.Verdict)
	}
	res := mustApply(t, a, req)
	if len(res.Ops) != 1 || res.Ops[0].OK {
		t.Fatalf("ops %+v, want the first op refused", res.Ops)
	}
	if !strings.Contains(res.Ops[0].Reply, "missing.sock") {
		t.Errorf("op reply %q does not say which socket failed", res.Ops[0].Reply)
	}
	if !res.Reload.Performed || !res.Reload.OK || !strings.HasPrefix(res.Reload.Reason, "fallback: op 0 failed") {
		t.Errorf("reload %+v, want a fallback reload that succeeded", res.Reload)
	}
	if diff := cmp.Diff(outFiles(next), treeFiles(t, s.dir)); diff != "" {
		t.Errorf("tree (-want +got):\n%s", diff)
	}
}

// TestAnAddedBackendIsBuiltInOneRoundTripAndARefusalStopsBeforeItsRoutes:
// the ops that build a backend the apply adds share one batch, so HAProxy
// runs all of them even after one is refused; the map entries that would
// route to it come in the next batch and are not sent. The fallback
// reload then serves the route from the new files.
func TestAnAddedBackendIsBuiltInOneRoundTripAndARefusalStopsBeforeItsRoutes(t *testing.T) {
	s := startSite(t, "3.4")
	a := s.newAgent(t, nil)
	add := addShopRoute(t, s, a)
	req := add.req
	kinds := make([]agentapi.OpKind, len(req.Ops))
	for i, op := range req.Ops {
		kinds[i] = op.Kind
	}
	want := []agentapi.OpKind{agentapi.OpAddBackend, agentapi.OpAddServer, agentapi.OpSetServerState, agentapi.OpPublishBackend}
	if len(kinds) < len(want)+1 || !slices.Equal(kinds[:len(want)], want) || kinds[len(want)] != agentapi.OpAddMapEntry {
		t.Fatalf("ops %v, want %v then map entries", kinds, want)
	}
	// HAProxy refuses the server (an unknown keyword); the files are
	// valid, so the fallback reload loads them.
	req.Ops[1].Keywords = []string{"no-such-keyword"}
	reloads := s.reloads(t)
	res := mustApply(t, a, req)
	if !res.Reload.Performed || !res.Reload.OK || !strings.HasPrefix(res.Reload.Reason, "fallback: op 1 failed") {
		t.Fatalf("reload %+v, want a fallback reload after op 1", res.Reload)
	}
	if got := s.reloads(t); got != reloads+1 {
		t.Errorf("reloads %d → %d, want one", reloads, got)
	}
	got := make([]string, len(res.Ops))
	for i, r := range res.Ops {
		got[i] = fmt.Sprintf("%d %s ok=%v", r.Index, r.Op, r.OK)
	}
	wantRes := []string{
		fmt.Sprintf("0 %s ok=true", req.Ops[0]),
		fmt.Sprintf("1 %s ok=false", req.Ops[1]),
		fmt.Sprintf("2 %s ok=false", req.Ops[2]),
		fmt.Sprintf("3 %s ok=true", req.Ops[3]),
	}
	if diff := cmp.Diff(wantRes, got); diff != "" {
		t.Errorf("op results (-want +got): the batch runs whole, the map entries not at all:\n%s", diff)
	}
	if len(res.Ops) > 1 && !strings.Contains(res.Ops[1].Reply, "no-such-keyword") {
		t.Errorf("op 1 reply %q lacks HAProxy's complaint about the keyword", res.Ops[1].Reply)
	}
	if code, body := s.get(t, "shop.example.com"); code != 200 || body != "shop-a\n" {
		t.Errorf("GET shop after the fallback = %d %q, want 200 from shop-a", code, body)
	}
}
