package gatewayapi_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/haptic-io/haptic/gatewayapi"
	"github.com/haptic-io/haptic/store"
)

// A cached Build keeps each Gateway's backends in the previous Build's
// order and merges the new ones in: through route adds and deletes, on
// two Gateways that share some routes (and so backends), its contexts are
// those of a fresh Build.
func TestCachedBuildKeepsTheBackendOrderThroughAddsAndDeletes(t *testing.T) {
	st, err := memory(base + twoGateways)
	if err != nil {
		t.Fatal(err)
	}
	const n = 24
	routes := make([]map[string]any, n)
	for i := range n {
		parents := "[{name: one, namespace: infra}]"
		switch i % 3 {
		case 1:
			parents = "[{name: two, namespace: infra}]"
		case 2:
			parents = "[{name: one, namespace: infra}, {name: two, namespace: infra}]"
		}
		objs, err := store.DecodeManifests([]byte(fmt.Sprintf(`
apiVersion: v1
kind: Service
metadata: {namespace: apps, name: svc-%[1]d}
spec: {ports: [{port: 8080}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {namespace: apps, name: r-%[1]d}
spec:
  parentRefs: %[2]s
  hostnames: [h%[1]d.example.com]
  rules: [{backendRefs: [{name: svc-%[1]d, port: 8080}]}]
`, i, parents)))
		if err != nil {
			t.Fatal(err)
		}
		if err := st.Update(gatewayapi.AliasServices, objs[0]); err != nil {
			t.Fatal(err)
		}
		routes[i] = objs[1]
	}
	cache := &gatewayapi.Cache{}
	gws := []gatewayapi.Ref{{Namespace: "infra", Name: "one"}, {Namespace: "infra", Name: "two"}}
	present := make([]bool, n)
	rng := rand.New(rand.NewPCG(1, 2))
	for step := range 200 {
		// Mostly one change per Build, sometimes several.
		for range 1 + rng.IntN(3)/2*rng.IntN(5) {
			i := rng.IntN(n)
			if present[i] {
				err = st.Delete(gatewayapi.AliasHTTPRoutes, "apps", fmt.Sprintf("r-%d", i))
			} else {
				err = st.Update(gatewayapi.AliasHTTPRoutes, routes[i])
			}
			if err != nil {
				t.Fatal(err)
			}
			present[i] = !present[i]
		}
		got := gatewayapi.Build(st.Snapshot(), gatewayapi.Options{Cache: cache})
		want := gatewayapi.Build(st.Snapshot(), gatewayapi.Options{})
		for _, gw := range gws {
			if diff := cmp.Diff(want.RenderContext(gw), got.RenderContext(gw)); diff != "" {
				t.Fatalf("step %d, %s: cached context (-fresh +cached):\n%s", step, gw, diff)
			}
		}
	}
}
