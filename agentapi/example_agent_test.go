package agentapi_test

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"sort"
	"sync"

	"github.com/haptic-io/haptic/agentapi"
	"github.com/haptic-io/haptic/renderplan"
)

// memAgent is an in-process Applier that keeps its files in memory.
type memAgent struct {
	mu      sync.Mutex
	files   map[string][]byte
	applied string
	fence   uint64
}

func (a *memAgent) State(context.Context) (*agentapi.State, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	s := &agentapi.State{APIVersion: agentapi.APIVersion, OpKinds: agentapi.OpKinds(), AppliedPlanID: a.applied,
		Fence: a.fence, Files: map[string]renderplan.Digest{}}
	for p, b := range a.files {
		s.Files[p] = renderplan.DigestOf(b)
	}
	return s, nil
}

func (a *memAgent) Apply(_ context.Context, req *agentapi.ApplyRequest) (*agentapi.ApplyResult, error) {
	if err := req.Validate(agentapi.Limits{}); err != nil {
		return nil, err // an in-process caller gets the handler's checks too
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if req.Fence < a.fence || (req.ExpectedPlanID != "" && req.ExpectedPlanID != a.applied) {
		return nil, &agentapi.NackError{Stage: agentapi.StageFence, Op: -1,
			Message: fmt.Sprintf("agent runs %q at fence %d", a.applied, a.fence)}
	}
	next := map[string][]byte{}
	for _, f := range req.Files {
		body, ok := req.Bodies[f.Path]
		if !ok {
			body, ok = a.files[f.Path]
		}
		if !ok || renderplan.DigestOf(body) != f.Digest {
			return nil, &agentapi.NackError{Stage: agentapi.StageFiles, Op: -1, Message: "no body for " + f.Path}
		}
		next[f.Path] = body
	}
	a.files, a.applied, a.fence = next, req.PlanID, req.Fence
	res := &agentapi.ApplyResult{PlanID: req.PlanID, OK: true}
	for i, o := range req.Ops {
		res.Ops = append(res.Ops, agentapi.OpResult{Index: i, Op: o.String(), OK: true})
	}
	return res, nil
}

// The controller talks to an agent through a Client; the agent serves an
// Applier with NewHandler. Both ends share one set of types, and a NACK
// comes back as the same *NackError.
func ExampleNewHandler() {
	tok := agentapi.Token("example-token-0123456789")
	agent := &memAgent{}
	srv := httptest.NewServer(agentapi.NewHandler(agent, agentapi.HandlerOptions{Token: tok}))
	defer srv.Close()
	c := &agentapi.Client{BaseURL: srv.URL, Token: tok}
	ctx := context.Background()

	cfg := []byte("global\n")
	hosts := []byte("api.example.com be_api\n")
	req := &agentapi.ApplyRequest{
		PlanID: "plan-1", Fence: 1, Verdict: agentapi.VerdictRuntime,
		Files: []renderplan.File{
			{Path: "haproxy.cfg", Kind: renderplan.FileConfig, Digest: renderplan.DigestOf(cfg), Size: len(cfg)},
			{Path: "maps/hosts.map", Kind: renderplan.FileMap, Digest: renderplan.DigestOf(hosts), Size: len(hosts)},
		},
		Ops:    []agentapi.Op{{Kind: agentapi.OpSetMapEntry, Map: "maps/hosts.map", Key: "api.example.com", Value: "be_api"}},
		Bodies: map[string][]byte{"haproxy.cfg": cfg, "maps/hosts.map": hosts},
	}
	res, err := c.Apply(ctx, req)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("ack", res.PlanID, res.Ops[0].Op)

	st, _ := c.State(ctx)
	paths := make([]string, 0, len(st.Files))
	for p := range st.Files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	fmt.Println("applied", st.AppliedPlanID, "files", paths)

	// A controller with an older fencing token is refused.
	req.PlanID, req.Fence, req.Bodies = "plan-0", 0, nil
	_, err = c.Apply(ctx, req)
	var nack *agentapi.NackError
	if errors.As(err, &nack) {
		fmt.Println("nack at", nack.Stage+":", nack.Message)
	}

	// The same error reaches an in-process caller of the agent.
	_, err = agent.Apply(ctx, req)
	fmt.Println(errors.As(err, &nack) && nack.Stage == agentapi.StageFence)
	// Output:
	// ack plan-1 map.set maps/hosts.map key=api.example.com value=be_api
	// applied plan-1 files [haproxy.cfg maps/hosts.map]
	// nack at fence: agent runs "plan-1" at fence 1
	// true
}

// A request from a newer controller (here, an op kind this agent does
// not know) is refused as unsupported, and the controller falls back to
// the full state and a reload.
func ExampleNackError_unsupported() {
	cfg := []byte("global\n")
	_, err := agentapi.DecodeManifest([]byte(fmt.Sprintf(
		`{"planID":"p","files":[{"path":"haproxy.cfg","kind":"config","digest":%q,"size":%d}],"ops":[{"kind":"backend.teleport","backend":"be"}]}`,
		renderplan.DigestOf(cfg), len(cfg))), agentapi.Limits{})
	fmt.Println(errors.Is(err, agentapi.ErrUnsupported))
	fmt.Println(err)
	// Output:
	// true
	// agentapi: unsupported request: op 0: runtimeop: unknown op kind: "backend.teleport"
}
