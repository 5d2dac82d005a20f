package gatewayapi_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/haptic-io/haptic/gatewayapi"
	"github.com/haptic-io/haptic/store"
)

// benchRoutes is one Gateway with n HTTPRoutes (one host, two paths and
// one Service each) from route first on.
func benchRoutes(first, n int) string {
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
	for i := first; i < first+n; i++ {
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
	return sb.String()
}

// BenchmarkBuildRouteAdd is the Build of a route add, as the controller
// runs it after each change: one store of n HTTPRoutes where route n (and
// its Service) is added, then deleted, then added…, with one Cache, so
// that every Build sees one route more or one less than the one before.
func BenchmarkBuildRouteAdd(b *testing.B) {
	for _, n := range []int{300, 3000} {
		b.Run(fmt.Sprintf("routes=%d", n), func(b *testing.B) {
			m, err := memory(benchRoutes(0, n))
			if err != nil {
				b.Fatal(err)
			}
			all, err := store.DecodeManifests([]byte(benchRoutes(n, 1)))
			if err != nil {
				b.Fatal(err)
			}
			extra := all[len(all)-2:] // route n's Service and HTTPRoute
			aliases := []string{gatewayapi.AliasServices, gatewayapi.AliasHTTPRoutes}
			opts := gatewayapi.Options{Cache: &gatewayapi.Cache{}}
			gatewayapi.Build(m.Snapshot(), opts)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				for k, o := range extra {
					var err error
					if i%2 == 0 {
						err = m.Update(aliases[k], o)
					} else {
						md := o["metadata"].(map[string]any)
						err = m.Delete(aliases[k], md["namespace"].(string), md["name"].(string))
					}
					if err != nil {
						b.Fatal(err)
					}
				}
				i++
				model := gatewayapi.Build(m.Snapshot(), opts)
				if model.RenderContext(gatewayapi.Ref{Namespace: "infra", Name: "gw"}) == nil {
					b.Fatal("no context")
				}
			}
		})
	}
}

// BenchmarkBuild builds the model of one Gateway with n HTTPRoutes (one
// host, two paths and one Service each), as every render does: the same
// store again and again.
func BenchmarkBuild(b *testing.B) {
	for _, n := range []int{300, 3000} {
		b.Run(fmt.Sprintf("routes=%d", n), func(b *testing.B) {
			m, err := memory(benchRoutes(0, n))
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
