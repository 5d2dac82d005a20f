package controller

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/haptic-io/haptic/agentapi"
	"github.com/haptic-io/haptic/renderplan"
)

// patchAgent is an in-memory agentapi.Applier on HAProxy 3.4 that keeps
// file bodies and takes patches as the agent does: it rebuilds each body
// from the file it has and refuses (at the files stage) a patch whose
// base it does not have or whose result has the wrong digest.
type patchAgent struct {
	mu       sync.Mutex
	patches  bool // State.BodyPatches
	applied  string
	files    map[string][]byte
	requests []*agentapi.ApplyRequest
}

func (a *patchAgent) State(context.Context) (*agentapi.State, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	st := &agentapi.State{APIVersion: agentapi.APIVersion, OpKinds: agentapi.OpKinds(), HAProxyVersion: "3.4.7-1",
		AppliedPlanID: a.applied, Files: map[string]renderplan.Digest{}, BodyPatches: a.patches}
	for p, b := range a.files {
		st.Files[p] = renderplan.DigestOf(b)
	}
	return st, nil
}

func (a *patchAgent) Apply(_ context.Context, req *agentapi.ApplyRequest) (*agentapi.ApplyResult, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.requests = append(a.requests, req)
	if err := req.Validate(agentapi.Limits{}); err != nil {
		return nil, err
	}
	next := map[string][]byte{}
	for _, f := range req.Files {
		body, ok := req.Bodies[f.Path]
		if pt, patched := req.Patches[f.Path]; patched {
			base := a.files[f.Path]
			if renderplan.DigestOf(base) != pt.Base {
				return nil, &agentapi.NackError{Stage: agentapi.StageFiles, Op: -1, Message: "patch base differs for " + f.Path}
			}
			var err error
			if body, err = pt.Apply(base); err != nil {
				return nil, &agentapi.NackError{Stage: agentapi.StageFiles, Op: -1, Message: err.Error()}
			}
			ok = true
		}
		if !ok {
			body, ok = a.files[f.Path]
		}
		if !ok || renderplan.DigestOf(body) != f.Digest {
			return nil, &agentapi.NackError{Stage: agentapi.StageFiles, Op: -1, Message: "no body for " + f.Path}
		}
		next[f.Path] = body
	}
	a.files, a.applied = next, req.PlanID
	return &agentapi.ApplyResult{OK: true, PlanID: req.PlanID}, nil
}

// last returns the last request the agent got.
func (a *patchAgent) last() *agentapi.ApplyRequest {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.requests[len(a.requests)-1]
}

// routesOutput renders n routes: one dynamic backend each and a host map
// entry, enough for haproxy.cfg and the map to be worth patching.
func routesOutput(t *testing.T, n int) *renderplan.Output {
	t.Helper()
	b := renderplan.NewBuilder()
	b.Text("global\n    stats timeout 1h\n\ndefaults base\n    mode http\n    timeout connect 5s\n    timeout client 30s\n    timeout server 30s\n\n" +
		"frontend fe from base\n    bind 127.0.0.1:18080\n    use_backend %[req.hdr(host),host_only,lower,map(maps/hosts.map)]\n\n")
	if err := b.Profile("web", []string{"mode http", "balance roundrobin"}); err != nil {
		t.Fatal(err)
	}
	hosts := renderplan.Map{Path: "maps/hosts.map"}
	for i := range n {
		name := fmt.Sprintf("be_r%04d", i)
		if err := b.Backend(renderplan.Backend{Name: name, GUID: "g-" + name, Profile: "web",
			Servers: []renderplan.Server{{Name: "s1", Address: "127.0.0.1", Port: 9000 + i, Weight: renderplan.DefaultWeight}}}); err != nil {
			t.Fatal(err)
		}
		hosts.Entries = append(hosts.Entries, renderplan.MapEntry{Key: fmt.Sprintf("r%04d.example.com", i), Value: name})
	}
	if err := b.Map(hosts); err != nil {
		t.Fatal(err)
	}
	out, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// dispatchTo sends out to the agent as the pod "p" and fails the test on
// an error.
func dispatchTo(t *testing.T, d *dispatcher, a agentapi.Applier, out *renderplan.Output) {
	t.Helper()
	if _, err := d.dispatch(context.Background(), []Target{{Name: "p", Agent: a}}, out, out.ID(), nil); err != nil {
		t.Fatal(err)
	}
}

// bodiesOf returns the file bodies of out by path.
func bodiesOf(out *renderplan.Output) map[string][]byte {
	m := map[string][]byte{}
	for _, f := range out.Files {
		m[f.Path] = f.Body
	}
	return m
}

func TestARouteAddReachesAnAgentThatTakesPatchesAsPatches(t *testing.T) {
	a := &patchAgent{patches: true}
	d := newDispatcher(1, 0, testLogger(t), mustMetrics(t))
	first, second := routesOutput(t, 200), routesOutput(t, 201)
	dispatchTo(t, d, a, first)
	if n := len(a.last().Patches); n != 0 {
		t.Errorf("the first apply carried %d patches, want none (no base yet)", n)
	}
	dispatchTo(t, d, a, second)
	req := a.last()
	if diff := cmp.Diff([]string{"haproxy.cfg", "maps/hosts.map"}, sortedKeys(req.Patches)); diff != "" {
		t.Errorf("patched files (-want +got):\n%s", diff)
	}
	if len(req.Bodies) != 0 {
		t.Errorf("the route add carried bodies for %v, want patches only", sortedKeys(req.Bodies))
	}
	sent := 0
	for _, pt := range req.Patches {
		sent += len(pt.Literal)
	}
	if total := len(bodiesOf(second)["haproxy.cfg"]); sent*10 > total {
		t.Errorf("patches carry %d bytes of a %d-byte haproxy.cfg, want far less", sent, total)
	}
	if diff := cmp.Diff(bodiesOf(second), a.files, cmp.Comparer(bytes.Equal)); diff != "" {
		t.Errorf("agent files (-want +got):\n%s", diff)
	}
}

func TestAnAgentThatDoesNotTakePatchesGetsBodies(t *testing.T) {
	a := &patchAgent{}
	d := newDispatcher(1, 0, testLogger(t), mustMetrics(t))
	dispatchTo(t, d, a, routesOutput(t, 200))
	second := routesOutput(t, 201)
	dispatchTo(t, d, a, second)
	req := a.last()
	if len(req.Patches) != 0 {
		t.Errorf("request carried patches for %v to an agent without BodyPatches", sortedKeys(req.Patches))
	}
	if diff := cmp.Diff([]string{"haproxy.cfg", "maps/hosts.map"}, sortedKeys(req.Bodies)); diff != "" {
		t.Errorf("bodies (-want +got):\n%s", diff)
	}
}

func TestARefusedPatchIsSentAgainAsBodies(t *testing.T) {
	a := &patchAgent{patches: true}
	d := newDispatcher(1, 0, testLogger(t), mustMetrics(t))
	first, second := routesOutput(t, 200), routesOutput(t, 201)
	dispatchTo(t, d, a, first)
	// The agent's map is not the one the dispatcher sent (same digest
	// claimed, other bytes): its patch cannot rebuild the new map.
	a.mu.Lock()
	hosts := bytes.Clone(a.files["maps/hosts.map"])
	hosts[0] ^= 1
	a.files["maps/hosts.map"] = hosts
	a.mu.Unlock()
	before := len(a.requests)
	res, err := d.dispatch(context.Background(), []Target{{Name: "p", Agent: (*lyingAgent)(a)}}, second, second.ID(), nil)
	if err != nil {
		t.Fatalf("dispatch: %v (%+v)", err, res)
	}
	if got := len(a.requests) - before; got != 2 {
		t.Fatalf("the agent got %d requests, want 2 (patches, then bodies)", got)
	}
	if len(a.requests[before].Patches) == 0 || len(a.last().Patches) != 0 || len(a.last().Bodies) == 0 {
		t.Errorf("requests: %d patches then %d patches and %d bodies, want patches then bodies only",
			len(a.requests[before].Patches), len(a.last().Patches), len(a.last().Bodies))
	}
	if diff := cmp.Diff(bodiesOf(second), a.files, cmp.Comparer(bytes.Equal)); diff != "" {
		t.Errorf("agent files (-want +got):\n%s", diff)
	}
}

// lyingAgent is a patchAgent that reports the digests of the files the
// dispatcher sent rather than of the files it has (a tree changed behind
// its back that it has not noticed yet).
type lyingAgent patchAgent

func (l *lyingAgent) State(ctx context.Context) (*agentapi.State, error) {
	a := (*patchAgent)(l)
	st, err := a.State(ctx)
	if err == nil {
		a.mu.Lock()
		prev := a.requests[len(a.requests)-1]
		a.mu.Unlock()
		for _, f := range prev.Files {
			st.Files[f.Path] = f.Digest
		}
	}
	return st, err
}

func (l *lyingAgent) Apply(ctx context.Context, req *agentapi.ApplyRequest) (*agentapi.ApplyResult, error) {
	return (*patchAgent)(l).Apply(ctx, req)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func TestDispatchSendsTheDecisionMadeAhead(t *testing.T) {
	a := &patchAgent{patches: true}
	d := newDispatcher(1, 0, testLogger(t), mustMetrics(t))
	first, second := routesOutput(t, 200), routesOutput(t, 201)
	dispatchTo(t, d, a, first)
	targets := []Target{{Name: "p", Agent: a}, {Name: "down", Agent: a}}
	pre := d.prefetch(context.Background(), targets[:1])()
	pre["down"] = prefetched{err: errors.New("unreachable")}
	d.diffAhead(second, pre)
	if pre["down"].dec != nil {
		t.Error("a pod whose state could not be read got a decision")
	}
	p := pre["p"]
	if p.dec == nil || p.dec.Verdict != agentapi.VerdictRuntime || len(p.dec.Ops) < 2 {
		t.Fatalf("decision made ahead: %+v, want a runtime one", p.dec)
	}
	// Marked (its last op dropped), so that a diff made again would show.
	ahead := *p.dec
	ahead.Ops = ahead.Ops[:len(ahead.Ops)-1]
	p.dec = &ahead
	pre["p"] = p
	if _, err := d.dispatch(context.Background(), targets[:1], second, second.ID(), pre); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(ahead.Ops, a.last().Ops); diff != "" {
		t.Errorf("ops sent differ from the decision made ahead (-ahead +sent):\n%s", diff)
	}
}
