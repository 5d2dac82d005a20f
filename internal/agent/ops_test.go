package agent_test

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

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
	first := s.newAgent(t, nil)
	w := world{routes: []route{{"api.example.com", "be_api", []renderplan.Server{server("pod-1", e1)}}}}
	prev := s.build(t, w)
	mustApply(t, first, fullRequest(prev, 1))
	// A second agent on the same tree whose stats socket path is wrong.
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
