package libraries_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/haptic-io/haptic/agentapi/runtimeop"
	"github.com/haptic-io/haptic/deployplan"
	"github.com/haptic-io/haptic/gatewayapi"
	"github.com/haptic-io/haptic/renderplan"
	"github.com/haptic-io/haptic/store"
	"github.com/haptic-io/haptic/templating"
)

// gatewayBenchRoute is HTTPRoute t/r-i for host h<i>.example.com with its
// Service (port 8080) and an EndpointSlice of one endpoint.
func gatewayBenchRoute(i int) []map[string]any {
	name := fmt.Sprintf("r-%d", i)
	return []map[string]any{
		{
			"apiVersion": "v1", "kind": "Service",
			"metadata": map[string]any{"namespace": "t", "name": name, "resourceVersion": "1"},
			"spec":     map[string]any{"ports": []any{map[string]any{"name": "http", "port": int64(8080)}}},
		},
		{
			"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
			"metadata":    map[string]any{"namespace": "t", "name": name, "resourceVersion": "1", "labels": map[string]any{"kubernetes.io/service-name": name}},
			"addressType": "IPv4",
			"ports":       []any{map[string]any{"name": "http", "port": int64(3000)}},
			"endpoints": []any{map[string]any{
				"addresses": []any{fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255)}, "conditions": map[string]any{"ready": true},
			}},
		},
		{
			"apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute",
			"metadata": map[string]any{"namespace": "t", "name": name, "resourceVersion": "1", "creationTimestamp": "2026-01-01T00:00:00Z"},
			"spec": map[string]any{
				"parentRefs": []any{map[string]any{"name": "gw"}},
				"hostnames":  []any{fmt.Sprintf("h%d.example.com", i)},
				"rules":      []any{map[string]any{"backendRefs": []any{map[string]any{"name": name, "port": int64(8080)}}}},
			},
		},
	}
}

// BenchmarkGatewayRouteAdd is the controller's path for one HTTPRoute
// added to (then removed from) a Gateway with n routes, each op one add
// or one removal: gatewayapi.Build with a Cache, the render of the base
// and gateway libraries, and deployplan.Diff against the previous plan
// on HAProxy 3.4. It reports each step's share (build-ms, render-ms,
// diff-ms) besides the total.
//
//	go test -run '^$' -bench GatewayRouteAdd -benchtime 100x ./libraries/
func BenchmarkGatewayRouteAdd(b *testing.B) {
	for _, n := range []int{300, 3000} {
		b.Run(fmt.Sprintf("routes=%d", n), func(b *testing.B) {
			cfg := gatewayConfig(b)
			objs, err := store.DecodeManifests([]byte(gatewayClass + `
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {namespace: t, name: gw, generation: 1, resourceVersion: "1"}
spec:
  gatewayClassName: haptic
  listeners: [{name: http, port: 80, protocol: HTTP}]
`))
			if err != nil {
				b.Fatal(err)
			}
			for i := range n {
				objs = append(objs, gatewayBenchRoute(i)...)
			}
			st := storeOf(b, cfg, objs)
			engine, err := templating.Compile(cfg)
			if err != nil {
				b.Fatal(err)
			}
			opts := gatewayapi.Options{Cache: &gatewayapi.Cache{}}
			ref := gatewayapi.Ref{Namespace: "t", Name: "gw"}
			var build, render, diff time.Duration
			step := func() *renderplan.Output {
				t0 := time.Now()
				snap := st.Snapshot()
				gctx := gatewayapi.Build(snap, opts).RenderContext(ref)
				if gctx == nil {
					b.Fatal("Gateway t/gw is not served")
				}
				t1 := time.Now()
				out, problems, err := engine.Render(context.Background(), snap, templating.RenderOptions{ExtraContext: map[string]any{"gateway": gctx}})
				if err != nil || len(problems) > 0 {
					b.Fatalf("render: %v %v", err, problems)
				}
				_ = out.ID()
				build += t1.Sub(t0)
				render += time.Since(t1)
				return out
			}
			prev := step()
			extra := gatewayBenchRoute(n)
			b.ReportAllocs()
			build, render = 0, 0
			i := 0
			for b.Loop() {
				if i%2 == 0 {
					addObjects(b, cfg, st, extra)
				} else {
					for _, o := range extra {
						md := o["metadata"].(map[string]any)
						alias := map[string]string{"Service": "services", "EndpointSlice": "endpoints", "HTTPRoute": "httproutes"}[o["kind"].(string)]
						if err := st.Delete(alias, md["namespace"].(string), md["name"].(string)); err != nil {
							b.Fatal(err)
						}
					}
				}
				i++
				out := step()
				t0 := time.Now()
				d := deployplan.Diff(out.Plan, deployplan.Baseline{Plan: prev.Plan, HAProxyVersion: "3.4.7-1", AgentOps: runtimeop.OpKinds()})
				diff += time.Since(t0)
				if d.Verdict == "" {
					b.Fatal("no verdict")
				}
				prev = out
			}
			b.ReportMetric(float64(build.Microseconds())/1000/float64(b.N), "build-ms")
			b.ReportMetric(float64(render.Microseconds())/1000/float64(b.N), "render-ms")
			b.ReportMetric(float64(diff.Microseconds())/1000/float64(b.N), "diff-ms")
		})
	}
}
