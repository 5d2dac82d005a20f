package gatewayapi_test

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/haptic-io/haptic/gatewayapi"
	"github.com/haptic-io/haptic/store"
)

// A cached Build attaches an unchanged route as the Build before did
// only while the Gateways are the same: each change of what decides an
// attachment (a namespace's labels under a listener's selector, a
// Gateway that sorts before the others, a Gateway deleted, the class's
// controller, a listener's hostname), then a route added after it, gives
// the contexts and statuses of a fresh Build.
func TestCachedBuildReattachesWhenTheGatewaysChange(t *testing.T) {
	gateway := func(name, hostname string) string {
		return fmt.Sprintf(`
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {namespace: infra, name: %s, generation: 1}
spec:
  gatewayClassName: haptic
  listeners:
  - {name: http, port: 80, protocol: HTTP, hostname: %q, allowedRoutes: {namespaces: {from: All}}}
  - {name: edge, port: 8080, protocol: HTTP, allowedRoutes: {namespaces: {from: Selector, selector: {matchLabels: {tier: edge}}}}}
`, name, hostname)
	}
	route := func(i int) string {
		return fmt.Sprintf(`
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {namespace: apps, name: r-%[1]d}
spec:
  parentRefs: [{name: one, namespace: infra}, {name: two, namespace: infra}, {name: a-first, namespace: infra}]
  hostnames: [h%[1]d.example.com, h%[1]d.example.org]
  rules: [{backendRefs: [{name: web, port: 8080}]}]
`, i)
	}
	apps := func(labels string) string {
		return "\napiVersion: v1\nkind: Namespace\nmetadata: {name: apps, labels: " + labels + "}\n"
	}
	class := func(controller string) string {
		return "\napiVersion: gateway.networking.k8s.io/v1\nkind: GatewayClass\nmetadata: {name: haptic, generation: 1}\nspec: {controllerName: " + controller + "}\n"
	}
	st, err := memory(base + "\n---\n" + apps("{tier: edge}") + "\n---\n" + gateway("one", "*.example.com") + "\n---\n" + gateway("two", "") +
		"\n---\napiVersion: v1\nkind: Service\nmetadata: {namespace: apps, name: web}\nspec: {ports: [{port: 8080}]}\n---\n" + route(0) + "\n---\n" + route(1))
	if err != nil {
		t.Fatal(err)
	}
	aliases := map[string]string{"Gateway": gatewayapi.AliasGateways, "GatewayClass": gatewayapi.AliasGatewayClasses,
		"HTTPRoute": gatewayapi.AliasHTTPRoutes, "Namespace": gatewayapi.AliasNamespaces}
	update := func(manifest string) {
		t.Helper()
		objs, err := store.DecodeManifests([]byte(manifest))
		if err != nil || len(objs) != 1 {
			t.Fatalf("%d objects, %v", len(objs), err)
		}
		if err := st.Update(aliases[objs[0]["kind"].(string)], objs[0]); err != nil {
			t.Fatal(err)
		}
	}
	del := func(alias, ns, name string) func() {
		return func() {
			if err := st.Delete(alias, ns, name); err != nil {
				t.Fatal(err)
			}
		}
	}
	next := 2
	addRoute := func() { update(route(next)); next++ }
	steps := []struct {
		name   string
		change func()
	}{
		{"first", func() {}},
		{"route added", addRoute},
		{"namespace no longer selected", func() { update(apps("{tier: back}")) }},
		{"route added", addRoute},
		{"namespace selected again", func() { update(apps("{tier: edge}")) }},
		{"route added", addRoute},
		{"gateway sorting first", func() { update(gateway("a-first", "")) }},
		{"route added", addRoute},
		{"gateway deleted", del(gatewayapi.AliasGateways, "infra", "one")},
		{"route added", addRoute},
		{"listener hostname changed", func() { update(gateway("two", "*.example.org")) }},
		{"route added", addRoute},
		{"class not ours", func() { update(class("example.com/other")) }},
		{"class ours again", func() { update(class("haproxy-haptic.org/gateway-controller")) }},
		{"route added", addRoute},
		{"route deleted", del(gatewayapi.AliasHTTPRoutes, "apps", "r-0")},
	}
	cache := &gatewayapi.Cache{}
	var prev string
	for _, step := range steps {
		step.change()
		got := gatewayapi.Build(st.Snapshot(), gatewayapi.Options{Cache: cache})
		want := gatewayapi.Build(st.Snapshot(), gatewayapi.Options{})
		if diff := cmp.Diff(want.Gateways(), got.Gateways()); diff != "" {
			t.Fatalf("%s: cached Gateways (-fresh +cached):\n%s", step.name, diff)
		}
		out := js(want.Statuses(programmed))
		for _, gw := range want.Gateways() {
			if diff := cmp.Diff(want.RenderContext(gw), got.RenderContext(gw)); diff != "" {
				t.Fatalf("%s, %s: cached context (-fresh +cached):\n%s", step.name, gw, diff)
			}
			out += js(want.RenderContext(gw))
		}
		if diff := cmp.Diff(want.Statuses(programmed), got.Statuses(programmed)); diff != "" {
			t.Fatalf("%s: cached statuses (-fresh +cached):\n%s", step.name, diff)
		}
		if out == prev {
			t.Errorf("%s: the step changed nothing; the test does not test it", step.name)
		}
		prev = out
	}
}
