package gatewayapi_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/haptic-io/haptic/gatewayapi"
)

// twoGateways are Gateways infra/one and infra/two of class haptic, each
// with one HTTP listener that takes routes from every namespace.
const twoGateways = `
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {namespace: infra, name: one, generation: 1}
spec:
  gatewayClassName: haptic
  listeners: [{name: http, port: 80, protocol: HTTP, allowedRoutes: {namespaces: {from: All}}}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {namespace: infra, name: two, generation: 1}
spec:
  gatewayClassName: haptic
  listeners: [{name: http, port: 8080, protocol: HTTP, allowedRoutes: {namespaces: {from: All}}}]
`

// webOnBoth is Service apps/web and HTTPRoute apps/web, attached to both
// of twoGateways; the Service comes second to last.
const webOnBoth = `
---
apiVersion: v1
kind: Service
metadata: {namespace: apps, name: web}
spec: {ports: [{port: 8080}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {namespace: apps, name: web}
spec:
  parentRefs: [{name: one, namespace: infra}, {name: two, namespace: infra}]
  hostnames: [web.example.com]
  rules: [{backendRefs: [{name: web, port: 8080}]}]
`

// Options.RenderGateway builds that Gateway's render context alone, the
// same as a Build of every context gives it; the rest of the Model is
// unchanged.
func TestRenderGatewayBuildsThatContextAlone(t *testing.T) {
	m, err := memory(base + twoGateways + webOnBoth)
	if err != nil {
		t.Fatal(err)
	}
	one, two := gatewayapi.Ref{Namespace: "infra", Name: "one"}, gatewayapi.Ref{Namespace: "infra", Name: "two"}
	all := gatewayapi.Build(m.Snapshot(), gatewayapi.Options{})
	for _, cached := range []bool{false, true} {
		opts := gatewayapi.Options{RenderGateway: two}
		if cached {
			opts.Cache = &gatewayapi.Cache{}
		}
		only := gatewayapi.Build(m.Snapshot(), opts)
		if all.RenderContext(two) == nil || all.RenderContext(one) == nil {
			t.Fatal("a Build of every context left one out")
		}
		if got := only.RenderContext(one); got != nil {
			t.Errorf("cache %t: RenderContext(%s) = %v; want nil, another Gateway was asked for", cached, one, got)
		}
		if diff := cmp.Diff(all.RenderContext(two), only.RenderContext(two)); diff != "" {
			t.Errorf("cache %t: RenderContext(%s) (-every context +that one alone):\n%s", cached, two, diff)
		}
		if diff := cmp.Diff(all.Gateways(), only.Gateways()); diff != "" {
			t.Errorf("cache %t: Gateways (-every context +that one alone):\n%s", cached, diff)
		}
		if diff := cmp.Diff(all.Statuses(nil), only.Statuses(nil)); diff != "" {
			t.Errorf("cache %t: Statuses (-every context +that one alone):\n%s", cached, diff)
		}
	}
}
