package agent_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/haptic-io/haptic/internal/agent"
	"github.com/haptic-io/haptic/internal/haproxytest"
	"github.com/haptic-io/haptic/renderplan"
)

// TestAnAgentRestartedOnAChangedTreeReportsTheDisk: a supervisor that
// writes its bootstrap config over a committed tree before the agent
// starts (or anyone who edits the tree) must not leave the agent
// reporting the committed digests: the controller sends no body for a
// file whose digest it sees, and the agent refuses an apply that lacks
// one. The restarted agent reports the tree as it is, so the full-state
// apply the controller builds from that state lands at once.
func TestAnAgentRestartedOnAChangedTreeReportsTheDisk(t *testing.T) {
	for name, change := range map[string]func(t *testing.T, s *site, a *agent.Agent) *agent.Agent{
		"restart after the bootstrap config was written": func(t *testing.T, s *site, a *agent.Agent) *agent.Agent {
			if err := a.Close(); err != nil {
				t.Fatal(err)
			}
			writeBootstrap(t, s)
			return s.newAgent(t, nil)
		},
		"drift check after the bootstrap config was written": func(t *testing.T, s *site, a *agent.Agent) *agent.Agent {
			writeBootstrap(t, s)
			if !a.CheckDrift() {
				t.Fatal("the bootstrap config over the tree is not drift")
			}
			return a
		},
	} {
		t.Run(name, func(t *testing.T) {
			s := startSite(t, "3.4")
			echo := haproxytest.StartEcho(t, "api-a")
			a, err := agent.New(s.config(t))
			if err != nil {
				t.Fatal(err)
			}
			first := a
			t.Cleanup(func() {
				if a == first {
					_ = first.Close()
				}
			})
			w := world{routes: []route{{"api.example.com", "be_api", []renderplan.Server{server("api-a", echo)}}}}
			out := s.build(t, w)
			mustApply(t, a, fullRequest(out, 1))

			a = change(t, s, a)
			st, err := a.State(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			boot := renderplan.DigestOf(bootstrap(s))
			if !st.Drifted || st.AppliedPlanID != "" || st.Files[renderplan.ConfigPath] != boot {
				t.Fatalf("state: drifted %v, applied %q, haproxy.cfg %s; want drifted, no plan and the bootstrap's digest %s",
					st.Drifted, st.AppliedPlanID, st.Files[renderplan.ConfigPath], boot)
			}
			// What the controller sends: the full state with the bodies
			// of the files the state does not list with their digest.
			req := fullRequest(out, 2)
			for _, f := range out.Plan.Files {
				if st.Files[f.Path] == f.Digest {
					delete(req.Bodies, f.Path)
				}
			}
			if _, ok := req.Bodies[renderplan.ConfigPath]; !ok || len(req.Bodies) != 1 {
				t.Errorf("the request carries bodies for %v, want haproxy.cfg alone", keys(req.Bodies))
			}
			if res := mustApply(t, a, req); !res.Reload.Performed || !res.Reload.OK {
				t.Errorf("reload %+v, want performed and OK", res.Reload)
			}
			if code, body := s.get(t, "api.example.com"); code != 200 || body != "api-a\n" {
				t.Errorf("GET api = %d %q, want 200 from api-a", code, body)
			}
			if st, _ := a.State(context.Background()); st.Drifted || st.AppliedPlanID != out.Plan.ID() {
				t.Errorf("after the apply: drifted %v, applied %q; want %q", st.Drifted, st.AppliedPlanID, out.Plan.ID())
			}
		})
	}
}

func bootstrap(s *site) []byte {
	return agent.BootstrapConfig(s.stats, []string{fmt.Sprintf("127.0.0.1:%d", s.port)})
}

func writeBootstrap(t *testing.T, s *site) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(s.dir, renderplan.ConfigPath), bootstrap(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
