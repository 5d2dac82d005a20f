package libraries_test

import (
	"testing"

	"github.com/haptic-io/haptic/agentapi"
	"github.com/haptic-io/haptic/deployplan"
	"github.com/haptic-io/haptic/internal/haproxytest"
	"github.com/haptic-io/haptic/renderplan"
)

const runtimeGateway = `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {namespace: t, name: gw, generation: 1}
spec:
  gatewayClassName: haptic
  listeners: [{name: http, port: 80, protocol: HTTP}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {namespace: t, name: a, creationTimestamp: "2026-01-01T00:00:00Z"}
spec:
  parentRefs: [{name: gw}]
  hostnames: [a.test]
  rules: [{backendRefs: [{name: a, port: 8080}]}]
`

const routeB = `
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {namespace: t, name: b, creationTimestamp: "2026-01-02T00:00:00Z"}
spec:
  parentRefs: [{name: gw}]
  hostnames: [b.test]
  rules:
  - matches: [{path: {type: PathPrefix, value: /api}}, {path: {type: Exact, value: /login}}]
    backendRefs: [{name: b, port: 8080}]
`

// TestGatewayRouteAddIsRuntimeOnlyOn34 deploys a Gateway with one route
// through the agent, adds an HTTPRoute with a new Service, and checks
// that deployplan says runtime on HAProxy 3.4, that the agent applies it
// without a reload, and that the new route serves; then removes it the
// same way. On 3.0 the same change reloads (no dynamic backends).
func TestGatewayRouteAddIsRuntimeOnlyOn34(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real HAProxy; skipped with -short")
	}
	for _, tc := range []struct {
		series string
		want   agentapi.Verdict
	}{{"3.4", agentapi.VerdictRuntime}, {"3.0", agentapi.VerdictReload}} {
		t.Run(tc.series, func(t *testing.T) {
			inst := haproxytest.Start(t, tc.series, haproxytest.Options{})
			a := newLibraryAgent(t, inst)
			f := newGatewayFixture(t, runtimeGateway)
			f.services(1, "a", "b")
			off := freeOffset(t, 80)
			extra := map[string]any{"statsSocket": inst.StatsSocket, "statsPort": int64(haproxytest.FreePort(t))}
			first, _ := f.renderWith(off, extra)
			apply(t, a, fullApply(first, 1))
			if got := do(t, off, request{host: "a.test", path: "/"}); got.backend != "a" {
				t.Fatalf("before: a.test answered by %q", got.backend)
			}

			without := f.objs
			f.add(routeB)
			second, _ := f.renderWith(off, extra)
			res := step(t, a, inst, first, second, 2, tc.want)
			if tc.want == agentapi.VerdictRuntime && res.Reload.Performed {
				t.Errorf("route add reloaded: %+v", res.Reload)
			}
			for _, p := range []string{"/api", "/api/x", "/login"} {
				if got := do(t, off, request{host: "b.test", path: p}); got.status != 200 || got.backend != "b" {
					t.Errorf("after add: GET b.test%s = %d from %q, want b", p, got.status, got.backend)
				}
			}
			if got := do(t, off, request{host: "b.test", path: "/other"}); got.status != 404 {
				t.Errorf("after add: GET b.test/other = %d, want 404", got.status)
			}

			f.objs = without
			third, _ := f.renderWith(off, extra)
			res = step(t, a, inst, second, third, 3, tc.want)
			if tc.want == agentapi.VerdictRuntime && res.Reload.Performed {
				t.Errorf("route delete reloaded: %+v", res.Reload)
			}
			if got := do(t, off, request{host: "b.test", path: "/api"}); got.status != 404 {
				t.Errorf("after delete: GET b.test/api = %d, want 404", got.status)
			}
			if got := do(t, off, request{host: "a.test", path: "/"}); got.backend != "a" {
				t.Errorf("after delete: a.test answered by %q", got.backend)
			}
		})
	}
}

// step diffs next against prev for inst's version, checks the verdict
// and applies it through the agent.
func step(t *testing.T, a interface {
	agentapi.Applier
}, inst *haproxytest.Instance, prev, next *renderplan.Output, fence uint64, want agentapi.Verdict) *agentapi.ApplyResult {
	t.Helper()
	d := deployplan.Diff(next.Plan, deployplan.Baseline{Plan: prev.Plan, HAProxyVersion: inst.Version, AgentOps: agentapi.OpKinds()})
	if d.Verdict != want {
		t.Fatalf("verdict %s, want %s: %v", d.Verdict, want, d.Reasons)
	}
	req := &agentapi.ApplyRequest{PlanID: next.Plan.ID(), ExpectedPlanID: prev.Plan.ID(), Fence: fence, Verdict: d.Verdict, Ops: d.Ops,
		Files: next.Plan.Files, Bodies: map[string][]byte{}}
	for _, f := range next.Files {
		req.Bodies[f.Path] = f.Body
	}
	ctxApply := func() *agentapi.ApplyResult {
		res, err := a.Apply(t.Context(), req)
		if err != nil {
			t.Fatalf("apply %s: %v", req.PlanID, err)
		}
		return res
	}
	return ctxApply()
}
