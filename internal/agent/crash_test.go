package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/haptic-io/haptic/agentapi"
	"github.com/haptic-io/haptic/internal/agent"
	"github.com/haptic-io/haptic/internal/haproxytest"
	"github.com/haptic-io/haptic/renderplan"
)

// The crash test re-executes the test binary as the agent process
// (TestMain below): it applies the request in crashRequestEnv and
// SIGKILLs itself when the apply reaches the step in crashStepEnv.
const (
	crashHelperEnv  = "HAPTIC_AGENT_CRASH_HELPER"
	crashStepEnv    = "HAPTIC_AGENT_CRASH_STEP"
	crashRequestEnv = "HAPTIC_AGENT_CRASH_REQUEST"
	crashConfigEnv  = "HAPTIC_AGENT_CRASH_CONFIG"
)

// crashExitNotReached is the helper's exit code when the apply finished
// without reaching the crash step.
const crashExitNotReached = 3

func TestMain(m *testing.M) {
	if os.Getenv(crashHelperEnv) == "1" {
		os.Exit(crashHelper())
	}
	os.Exit(m.Run())
}

type crashRequest struct {
	Request *agentapi.ApplyRequest `json:"request"`
	Bodies  map[string][]byte      `json:"bodies"`
}

type crashConfig struct {
	BaseDir, MasterSocket, StatsSocket string
}

func crashHelper() int {
	var cc crashConfig
	var cr crashRequest
	if err := json.Unmarshal([]byte(os.Getenv(crashConfigEnv)), &cc); err != nil {
		fmt.Fprintln(os.Stderr, "crash helper config:", err)
		return 2
	}
	b, err := os.ReadFile(os.Getenv(crashRequestEnv))
	if err == nil {
		err = json.Unmarshal(b, &cr)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "crash helper request:", err)
		return 2
	}
	cr.Request.Bodies = cr.Bodies
	step := os.Getenv(crashStepEnv)
	cfg := agent.Config{BaseDir: cc.BaseDir, MasterSocket: cc.MasterSocket, StatsSocket: cc.StatsSocket,
		MinReloadInterval: -1, DriftInterval: -1, Log: slog.New(slog.NewTextHandler(os.Stderr, nil))}
	cfg = agent.WithCrashPoint(cfg, func(s string) {
		if s == step {
			_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {} // the signal is on its way
		}
	})
	a, err := agent.New(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "crash helper:", err)
		return 2
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := a.Apply(ctx, cr.Request); err != nil {
		fmt.Fprintln(os.Stderr, "crash helper apply:", err)
		return 2
	}
	return crashExitNotReached
}

// TestKillingTheAgentAtAnyStepLeavesTheOldOrTheNewSet is test 5: the agent
// process is SIGKILLed at each step of an apply (runtime and reload
// verdicts); a new agent on the same directories must find the tree
// exactly at the old or the new set, and HAProxy serving, with its
// runtime state matching the tree once the recovery reload ran.
func TestKillingTheAgentAtAnyStepLeavesTheOldOrTheNewSet(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real HAProxy and agent processes; skipped with -short")
	}
	type scenario struct {
		name  string
		extra string // frontend line of the new plan (forces a reload)
		steps []string
	}
	for _, sc := range []scenario{
		{"runtime", "", []string{"marked", "ops", "staged", "journaled", "swap:maps/hosts.map", "swap:haproxy.cfg", "swapped", "committed", "done"}},
		{"reload", "    http-response set-header X-Gen b\n", []string{"staged", "journaled", "swap:maps/hosts.map", "swap:haproxy.cfg", "swapped", "reloaded", "committed", "done"}},
	} {
		for _, step := range sc.steps {
			t.Run(sc.name+"/"+step, func(t *testing.T) {
				s := startSite(t, "3.4")
				api, shop := haproxytest.StartEcho(t, "api-a"), haproxytest.StartEcho(t, "shop-a")
				w := world{routes: []route{{"api.example.com", "be_api", []renderplan.Server{server("api-a", api)}}}}
				old := s.build(t, w)
				func() {
					a, err := agent.New(s.config(t))
					if err != nil {
						t.Fatal(err)
					}
					defer a.Close()
					mustApply(t, a, fullRequest(old, 1))
				}()
				w.routes = append(w.routes, route{"shop.example.com", "be_shop", []renderplan.Server{server("shop-a", shop)}})
				w.extra = sc.extra
				next := s.build(t, w)
				req, d := diffRequest(t, s, old, next, 2)
				t.Logf("verdict %s, %d ops", d.Verdict, len(d.Ops))

				runCrashHelper(t, s, req, step)

				a, err := agent.New(s.config(t))
				if err != nil {
					t.Fatalf("restart: %v", err)
				}
				got := treeFiles(t, s.dir)
				isOld := cmp.Equal(outFiles(old), got)
				isNew := cmp.Equal(outFiles(next), got)
				if !isOld && !isNew {
					t.Fatalf("after a crash at %s the tree is neither set:\nold diff:\n%s\nnew diff:\n%s", step,
						cmp.Diff(outFiles(old), got), cmp.Diff(outFiles(next), got))
				}
				if code, body := s.get(t, "api.example.com"); code != 200 || body != "api-a\n" {
					t.Errorf("HAProxy after the crash: GET api = %d %q, want 200", code, body)
				}
				runAgent(t, a)
				want := 404
				if isNew {
					want = 200
				}
				waitFor(t, 10*time.Second, fmt.Sprintf("HAProxy to match the tree (shop → %d)", want), func() bool {
					code, _, err := haproxytest.TryGet(s.url(), "shop.example.com")
					return err == nil && code == want
				})
				st, _ := a.State(context.Background())
				wantPlan := old.Plan.ID()
				if isNew {
					wantPlan = next.Plan.ID()
				}
				if st.AppliedPlanID != wantPlan {
					t.Errorf("state applied %q, want %q (the tree's plan)", st.AppliedPlanID, wantPlan)
				}
				t.Logf("crash at %s: tree is the %s set", step, map[bool]string{true: "new", false: "old"}[isNew])
				// The agent takes the next apply from what it reports.
				w.routes[0].host = "api3.example.com"
				third := s.build(t, w)
				mustApply(t, a, fullRequest(third, 3))
				if code, _ := s.get(t, "api3.example.com"); code != 200 {
					t.Errorf("after recovery a full apply does not serve: %d", code)
				}
			})
		}
	}
}

// runCrashHelper runs the agent in a child process that kills itself at
// step, and checks it died by SIGKILL.
func runCrashHelper(t *testing.T, s *site, req *agentapi.ApplyRequest, step string) {
	t.Helper()
	b, err := json.Marshal(crashRequest{Request: req, Bodies: req.Bodies})
	if err != nil {
		t.Fatal(err)
	}
	reqFile := filepath.Join(t.TempDir(), "req.json")
	if err := os.WriteFile(reqFile, b, 0o600); err != nil {
		t.Fatal(err)
	}
	cc, _ := json.Marshal(crashConfig{BaseDir: s.dir, MasterSocket: s.master, StatsSocket: s.stats})
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), crashHelperEnv+"=1", crashStepEnv+"="+step, crashRequestEnv+"="+reqFile, crashConfigEnv+"="+string(cc))
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("crash helper: %v\n%s", err, out)
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("crash helper did not die at %s by SIGKILL (%v):\n%s", step, err, out)
	}
}

// TestRuntimeAppliesRunTheOpsBeforeTheFiles checks the order of the
// steps: an apply that serves through runtime ops alone marks and runs
// them before it stages anything (no file write delays HAProxy); one that
// reloads stages, journals and swaps first.
func TestRuntimeAppliesRunTheOpsBeforeTheFiles(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real HAProxy; skipped with -short")
	}
	for name, sc := range map[string]struct {
		extra string
		want  []string
	}{
		"runtime": {"", []string{"marked", "ops", "staged", "journaled", "swap:maps/hosts.map", "swap:haproxy.cfg", "swapped", "committed", "done"}},
		"reload":  {"    http-response set-header X-Gen b\n", []string{"staged", "journaled", "swap:maps/hosts.map", "swap:haproxy.cfg", "swapped", "reloaded", "committed", "done"}},
	} {
		t.Run(name, func(t *testing.T) {
			s := startSite(t, "3.4")
			api, shop := haproxytest.StartEcho(t, "api-a"), haproxytest.StartEcho(t, "shop-a")
			w := world{routes: []route{{"api.example.com", "be_api", []renderplan.Server{server("api-a", api)}}}}
			old := s.build(t, w)
			var steps []string
			record := false
			a, err := agent.New(agent.WithCrashPoint(s.config(t), func(step string) {
				if record {
					steps = append(steps, step)
				}
			}))
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			mustApply(t, a, fullRequest(old, 1))
			w.routes = append(w.routes, route{"shop.example.com", "be_shop", []renderplan.Server{server("shop-a", shop)}})
			w.extra = sc.extra
			req, d := diffRequest(t, s, old, s.build(t, w), 2)
			record = true
			mustApply(t, a, req)
			if diff := cmp.Diff(sc.want, steps); diff != "" {
				t.Errorf("verdict %s: steps (-want +got):\n%s", d.Verdict, diff)
			}
		})
	}
}
