package gatewayapi_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/haptic-io/haptic/gatewayapi"
)

// BenchmarkBuild builds the model of one Gateway with n HTTPRoutes (one
// host, two paths and one Service each), as every render does.
func BenchmarkBuild(b *testing.B) {
	for _, n := range []int{300, 3000} {
		b.Run(fmt.Sprintf("routes=%d", n), func(b *testing.B) {
			var sb strings.Builder
			sb.WriteString(base + `
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {namespace: infra, name: gw, generation: 1}
spec:
  gatewayClassName: haptic
  listeners: [{name: http, port: 80, protocol: HTTP, allowedRoutes: {namespaces: {from: All}}}]
`)
			for i := range n {
				fmt.Fprintf(&sb, `---
apiVersion: v1
kind: Service
metadata: {namespace: apps, name: svc-%d}
spec: {ports: [{port: 8080}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {namespace: apps, name: r-%d, resourceVersion: "1"}
spec:
  parentRefs: [{name: gw, namespace: infra}]
  hostnames: [h%d.example.com]
  rules:
  - matches: [{path: {type: PathPrefix, value: /api}}, {path: {type: Exact, value: /login}}]
    backendRefs: [{name: svc-%d, port: 8080}]
`, i, i, i, i)
			}
			m, err := memory(sb.String())
			if err != nil {
				b.Fatal(err)
			}
			snap := m.Snapshot()
			for _, cached := range []bool{false, true} {
				b.Run(fmt.Sprintf("cache=%t", cached), func(b *testing.B) {
					opts := gatewayapi.Options{}
					if cached {
						opts.Cache = &gatewayapi.Cache{}
					}
					b.ReportAllocs()
					for b.Loop() {
						model := gatewayapi.Build(snap, opts)
						if model.RenderContext(gatewayapi.Ref{Namespace: "infra", Name: "gw"}) == nil {
							b.Fatal("no context")
						}
					}
				})
			}
		})
	}
}
