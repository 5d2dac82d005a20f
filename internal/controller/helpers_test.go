package controller

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/haptic-io/haptic/agentapi"
	"github.com/haptic-io/haptic/renderplan"
	"github.com/haptic-io/haptic/templating"
)

// waitTimeout bounds every wait of these tests for something the loop
// does; it is a deadline against hangs, never an assertion on speed.
const waitTimeout = 10 * time.Second

// testConfig watches routes (test.haptic.io/v1 Route: spec.host,
// spec.address, spec.port) and renders one dynamic backend per route plus
// a host map entry. A route named "broken" makes the render fail.
const testConfig = `
watchedResources:
  routes: {apiVersion: test.haptic.io/v1, resource: routes, indexBy: ["metadata.namespace", "metadata.name"]}
haproxyConfig:
  template: |
    {{- if .resources.routes.Get "default" "broken" }}{{ fail "route default/broken breaks the template" }}{{ end -}}
    global
        stats timeout 1h
    defaults base
        mode http
        timeout connect 5s
        timeout client 30s
        timeout server 30s
    frontend fe_http from base
        bind 127.0.0.1:18080
        use_backend %[req.hdr(host),host_only,lower,map({{ registerMap (dict "name" "hosts.map") }})]
    {{- range .resources.routes.List }}
    {{- $name := printf "be_%s" .metadata.name }}
    {{- mapEntry "hosts.map" .spec.host $name }}
    {{ backend (dict "name" $name "balance" "roundrobin" "servers" (list (dict "name" "s1" "address" .spec.address "port" .spec.port))) }}
    {{- end }}
`

// testEngine compiles testConfig.
func testEngine(t *testing.T) *templating.Engine {
	t.Helper()
	cfg, err := templating.ParseConfig([]byte(testConfig))
	if err != nil {
		t.Fatal(err)
	}
	e, err := templating.Compile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// route returns a Route object.
func route(name, host, address string, port int) map[string]any {
	return map[string]any{
		"apiVersion": "test.haptic.io/v1",
		"kind":       "Route",
		"metadata":   map[string]any{"namespace": "default", "name": name},
		"spec":       map[string]any{"host": host, "address": address, "port": int64(port)},
	}
}

// upsert is the change that adds or updates a route.
func upsert(obj map[string]any) Change {
	ns, name := meta(obj)
	return Change{Alias: "routes", Namespace: ns, Name: name, Object: obj}
}

// chanSource is a Source fed by the test through a channel.
type chanSource struct{ in chan Event }

func newChanSource() *chanSource { return &chanSource{in: make(chan Event)} }

func (s *chanSource) Run(ctx context.Context, events chan<- Event) error {
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case ev := <-s.in:
			select {
			case events <- ev:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
}

// send delivers ev to the loop.
func (s *chanSource) send(t *testing.T, ev Event) {
	t.Helper()
	select {
	case s.in <- ev:
	case <-time.After(waitTimeout):
		t.Fatal("the loop does not take events")
	}
}

// fakeAgent is an in-memory agentapi.Applier on HAProxy 3.4 that commits
// every apply as last-known-good. nackNext, when set, refuses the next
// apply with that error.
type fakeAgent struct {
	mu       sync.Mutex
	applied  string
	lkg      string
	files    map[string]renderplan.Digest
	fence    uint64
	nackNext []*agentapi.NackError
	requests chan *agentapi.ApplyRequest
	// pace, when set, schedules the reloads (as the agent's pacing does)
	// until reloaded is called.
	pace, reloadDue bool
}

// reloaded runs the scheduled reload.
func (a *fakeAgent) reloaded() {
	a.mu.Lock()
	a.reloadDue = false
	a.mu.Unlock()
}

var _ agentapi.Applier = (*fakeAgent)(nil)

func newFakeAgent() *fakeAgent {
	return &fakeAgent{files: map[string]renderplan.Digest{}, requests: make(chan *agentapi.ApplyRequest, 64)}
}

func (a *fakeAgent) State(context.Context) (*agentapi.State, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	files := make(map[string]renderplan.Digest, len(a.files))
	for k, v := range a.files {
		files[k] = v
	}
	return &agentapi.State{
		APIVersion: agentapi.APIVersion, OpKinds: agentapi.OpKinds(), HAProxyVersion: "3.4.7-1",
		AppliedPlanID: a.applied, LastKnownGoodPlanID: a.lkg, Fence: a.fence, Files: files, ReloadPending: a.reloadDue,
	}, nil
}

func (a *fakeAgent) Apply(_ context.Context, req *agentapi.ApplyRequest) (*agentapi.ApplyResult, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.requests <- req
	if len(a.nackNext) > 0 {
		n := a.nackNext[0]
		a.nackNext = a.nackNext[1:]
		return nil, n
	}
	if req.ExpectedPlanID != "" && req.ExpectedPlanID != a.applied {
		return nil, &agentapi.NackError{Stage: agentapi.StageFence, Op: -1, Message: "expected plan " + req.ExpectedPlanID + ", running " + a.applied}
	}
	res := &agentapi.ApplyResult{OK: true, PlanID: req.PlanID}
	if req.Mode == agentapi.ModeRevertLKG {
		a.applied = a.lkg
		res.PlanID = a.lkg
		res.Reload = agentapi.ReloadInfo{Performed: true, OK: true, Reason: "mode revert_lkg"}
		return res, nil
	}
	for _, f := range req.Files {
		if _, ok := req.Bodies[f.Path]; !ok && a.files[f.Path] != f.Digest {
			return nil, &agentapi.NackError{Stage: agentapi.StageFiles, Op: -1, Message: "no body for " + f.Path}
		}
	}
	a.files = map[string]renderplan.Digest{}
	for _, f := range req.Files {
		a.files[f.Path] = f.Digest
	}
	a.applied, a.lkg = req.PlanID, req.PlanID
	if req.Mode == agentapi.ModeReload || req.Verdict == agentapi.VerdictReload {
		res.Reload = agentapi.ReloadInfo{Performed: true, OK: true, Reason: "verdict reload"}
		if a.pace {
			res.Reload = agentapi.ReloadInfo{Scheduled: true, Reason: "verdict reload"}
			a.reloadDue = true
		}
	}
	return res, nil
}

// next returns the next apply request the agent got.
func (a *fakeAgent) next(t *testing.T) *agentapi.ApplyRequest {
	t.Helper()
	select {
	case r := <-a.requests:
		return r
	case <-time.After(waitTimeout):
		t.Fatal("no apply request reached the agent")
		return nil
	}
}

// none checks that no apply request is queued.
func (a *fakeAgent) none(t *testing.T) {
	t.Helper()
	select {
	case r := <-a.requests:
		t.Fatalf("unexpected apply request: mode %s verdict %s plan %s", r.Mode, r.Verdict, r.PlanID)
	default:
	}
}

// testLogger writes the loop's logs to t.Log.
func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(tWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type tWriter struct{ t *testing.T }

func (w tWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

var _ io.Writer = tWriter{}

// runLoop starts l and stops it at the end of the test.
func runLoop(t *testing.T, l *Loop) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- l.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil && !errors.Is(err, context.Canceled) {
				t.Errorf("Run: %v", err)
			}
		case <-time.After(waitTimeout):
			t.Error("Run did not return after cancel")
		}
	})
}

// eventually waits until cond holds; it fails the test after waitTimeout.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// ops renders a request's ops as strings.
func ops(r *agentapi.ApplyRequest) []string {
	out := make([]string, len(r.Ops))
	for i, o := range r.Ops {
		out[i] = o.String()
	}
	return out
}

func describe(r *agentapi.ApplyRequest) string {
	return fmt.Sprintf("mode=%s verdict=%s ops=%v", r.Mode, r.Verdict, ops(r))
}
