package gatewayapi_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/haptic-io/haptic/gatewayapi"
	"github.com/haptic-io/haptic/store"
)

const twoListeners = `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {namespace: infra, name: gw, generation: 1}
spec:
  gatewayClassName: haptic
  listeners:
  - {name: http, port: 80, protocol: HTTP}
  - {name: foo, port: 80, protocol: HTTP, hostname: "*.foo.com"}
  - {name: alt, port: 8080, protocol: HTTP}
`

func TestRenderContextMapsRoutesByListenerHostAndPath(t *testing.T) {
	m := build(t, twoListeners+`
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {namespace: infra, name: a, creationTimestamp: "2026-01-01T00:00:00Z"}
spec:
  parentRefs: [{name: gw, sectionName: http}]
  hostnames: [example.com, "*.example.com"]
  rules:
  - matches: [{path: {type: Exact, value: /login}}, {path: {type: PathPrefix, value: /api/}}]
    backendRefs: [{name: api, port: 8080}]
  - backendRefs: [{name: web, port: 8080}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {namespace: infra, name: b, creationTimestamp: "2026-01-02T00:00:00Z"}
spec:
  parentRefs: [{name: gw, sectionName: foo}]
  rules: [{backendRefs: [{name: web, port: 8080}]}]
`)
	ctx := m.RenderContext(gatewayapi.Ref{Namespace: "infra", Name: "gw"})
	if ctx == nil {
		t.Fatal("no render context")
	}
	want := `gw-hosts-wild.map: .example.com@http http|*.example.com
gw-hosts-wild.map: .foo.com@foo foo|*.foo.com
gw-hosts.map: example.com@http http|example.com
gw-listeners-wild.map: .foo.com@80 foo
gw-listeners.map: *@80 http
gw-listeners.map: *@8080 alt
gw-paths-exact.map: http|*.example.com/login be_infra_api_8080
gw-paths-exact.map: http|example.com/login be_infra_api_8080
gw-paths-prefix-exact.map: http|*.example.com/api be_infra_api_8080
gw-paths-prefix-exact.map: http|example.com/api be_infra_api_8080
gw-paths-prefix.map: foo|*.foo.com/ be_infra_web_8080
gw-paths-prefix.map: http|*.example.com/ be_infra_web_8080
gw-paths-prefix.map: http|*.example.com/api/ be_infra_api_8080
gw-paths-prefix.map: http|example.com/ be_infra_web_8080
gw-paths-prefix.map: http|example.com/api/ be_infra_api_8080
`
	if diff := cmp.Diff(want, mapsOf(ctx)); diff != "" {
		t.Errorf("maps (-want +got):\n%s", diff)
	}
	fes := ctx["frontends"].([]any)
	if len(fes) != 2 {
		t.Fatalf("frontends: want 2 (ports 80, 8080), have %d", len(fes))
	}
}

// TestPrecedenceOrdersCandidatesAcrossRoutes checks the spec's order:
// exact path, longest prefix, method, header count, query count, oldest
// route, then rule order; a conditional group falls back to the shorter
// prefixes' rules.
func TestPrecedenceOrdersCandidatesAcrossRoutes(t *testing.T) {
	m := build(t, twoListeners+`
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {namespace: infra, name: old, creationTimestamp: "2026-01-01T00:00:00Z"}
spec:
  parentRefs: [{name: gw, sectionName: http}]
  rules:
  - matches: [{path: {type: PathPrefix, value: /v}, headers: [{name: X-Version, value: one}]}]
    backendRefs: [{name: web, port: 8080}]
  - matches: [{path: {type: PathPrefix, value: /}}]
    backendRefs: [{name: web, port: 8080}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {namespace: infra, name: new, creationTimestamp: "2026-01-02T00:00:00Z"}
spec:
  parentRefs: [{name: gw, sectionName: http}]
  rules:
  - matches: [{path: {type: PathPrefix, value: /v}, headers: [{name: X-Version, value: two}, {name: X-Env, value: canary}]}]
    backendRefs: [{name: api, port: 8080}]
  - matches: [{path: {type: PathPrefix, value: /v}, method: POST}]
    backendRefs: [{name: api, port: 8080}]
`)
	ctx := m.RenderContext(gatewayapi.Ref{Namespace: "infra", Name: "gw"})
	fes := ctx["frontends"].([]any)
	fe := fes[0].(map[string]any)
	groups := fe["groups"].([]any)
	if len(groups) != 1 {
		t.Fatalf("groups: want 1 (prefix /v), have %s", js(groups))
	}
	var order []string
	for _, c := range groups[0].(map[string]any)["candidates"].([]any) {
		cm := c.(map[string]any)
		order = append(order, js(map[string]any{"method": cm["method"], "headers": len(cm["headers"].([]any))}))
	}
	want := []string{`{"headers":0,"method":"POST"}`, `{"headers":2,"method":""}`, `{"headers":1,"method":""}`, `{"headers":0,"method":""}`}
	if diff := cmp.Diff(want, order); diff != "" {
		t.Errorf("candidate order (-want +got):\n%s", diff)
	}
	sels := fe["selectors"].([]any)
	if len(sels) != 4 {
		t.Errorf("selectors: want 4, have %d", len(sels))
	}
	// The root prefix stays a plain map entry.
	if got := mapsOf(ctx); !contains(got, "gw-paths-prefix.map: http|*/ be_infra_web_8080\n") {
		t.Errorf("maps: the root prefix should name its backend directly:\n%s", got)
	}
}

func js(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func contains(s, sub string) bool {
	return len(sub) == 0 || len(s) >= len(sub) && (s[:len(sub)] == sub || contains(s[1:], sub))
}

// TestCachedBuildEqualsAFreshOne changes a route between Builds that
// share a Cache: each Build equals one without the Cache.
func TestCachedBuildEqualsAFreshOne(t *testing.T) {
	route := func(rv, path string) string {
		return `
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {namespace: infra, name: r, resourceVersion: "` + rv + `"}
spec:
  parentRefs: [{name: gw, sectionName: http}]
  rules: [{matches: [{path: {type: PathPrefix, value: ` + path + `}}], backendRefs: [{name: web, port: 8080}]}]
`
	}
	cache := &gatewayapi.Cache{}
	for _, step := range []struct{ rv, path string }{{"1", "/a"}, {"1", "/a"}, {"2", "/b"}, {"2", "/b"}} {
		m, err := memory(base + "\n---\n" + twoListeners + "\n---\n" + route(step.rv, step.path))
		if err != nil {
			t.Fatal(err)
		}
		ref := gatewayapi.Ref{Namespace: "infra", Name: "gw"}
		got := gatewayapi.Build(m.Snapshot(), gatewayapi.Options{Cache: cache})
		want := gatewayapi.Build(m.Snapshot(), gatewayapi.Options{})
		if diff := cmp.Diff(want.RenderContext(ref), got.RenderContext(ref)); diff != "" {
			t.Fatalf("resourceVersion %s: cached context (-fresh +cached):\n%s", step.rv, diff)
		}
		if diff := cmp.Diff(want.Statuses(nil), got.Statuses(nil)); diff != "" {
			t.Fatalf("resourceVersion %s: cached statuses (-fresh +cached):\n%s", step.rv, diff)
		}
	}
}

// TestCachedBuildFollowsEveryKindOfChange builds a sequence of stores
// with one Cache: route edits, additions and deletions, a Service whose
// ports change, a ReferenceGrant that appears and changes, a listener
// that changes, an older route that takes over a path. Each cached Build
// equals a fresh one.
func TestCachedBuildFollowsEveryKindOfChange(t *testing.T) {
	gw := func(gen, altPort string) string {
		return `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {namespace: infra, name: gw, generation: ` + gen + `, resourceVersion: "` + gen + `"}
spec:
  gatewayClassName: haptic
  listeners:
  - {name: http, port: 80, protocol: HTTP, allowedRoutes: {namespaces: {from: All}}}
  - {name: foo, port: 80, protocol: HTTP, hostname: "*.foo.com"}
  - {name: alt, port: ` + altPort + `, protocol: HTTP}
`
	}
	routeA := `
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {namespace: infra, name: a, resourceVersion: "1", creationTimestamp: "2026-01-02T00:00:00Z"}
spec:
  parentRefs: [{name: gw}]
  hostnames: [a.example.com, x.foo.com]
  rules:
  - matches: [{path: {type: PathPrefix, value: /api}, headers: [{name: x-v, value: "2"}]}]
    filters: [{type: ResponseHeaderModifier, responseHeaderModifier: {set: [{name: x-a, value: "1"}]}}]
    backendRefs: [{name: web, port: 8080}]
  - backendRefs: [{name: api, port: 8080, weight: 3}, {name: web, port: 8080}]
  - matches: [{path: {type: PathPrefix, value: /f}}]
    backendRefs:
    - {name: api, port: 8080, filters: [{type: ResponseHeaderModifier, responseHeaderModifier: {set: [{name: x-b, value: "1"}]}}]}
    - {name: web, port: 8080}
`
	routeB := func(rv, path string) string {
		return `
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {namespace: infra, name: b, resourceVersion: "` + rv + `", creationTimestamp: "2026-01-02T00:00:00Z"}
spec:
  parentRefs: [{name: gw, sectionName: alt}, {name: gw, sectionName: http}]
  hostnames: [b.example.com]
  rules: [{matches: [{path: {type: Exact, value: ` + path + `}}], backendRefs: [{name: api, port: 8080}]}]
`
	}
	routeC := `
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {namespace: infra, name: c, resourceVersion: "1", creationTimestamp: "2026-01-02T00:00:00Z"}
spec:
  parentRefs: [{name: gw}]
  hostnames: [c.example.com]
  rules: [{backendRefs: [{name: web, namespace: apps, port: 8080}]}]
`
	older := `
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {namespace: apps, name: older, resourceVersion: "1", creationTimestamp: "2026-01-01T00:00:00Z"}
spec:
  parentRefs: [{name: gw, namespace: infra}]
  hostnames: [b.example.com]
  rules: [{matches: [{path: {type: Exact, value: /two}}], backendRefs: [{name: web, port: 8080}]}]
`
	grant := func(rv, kind string) string {
		return `
apiVersion: gateway.networking.k8s.io/v1
kind: ReferenceGrant
metadata: {namespace: apps, name: g, resourceVersion: "` + rv + `"}
spec:
  from: [{group: gateway.networking.k8s.io, kind: HTTPRoute, namespace: infra}]
  to: [{group: "", kind: ` + kind + `}]
`
	}
	webPorts := func(port string) string {
		return `
apiVersion: v1
kind: Service
metadata: {namespace: infra, name: web}
spec: {ports: [{name: http, port: ` + port + `}]}
`
	}
	steps := []struct {
		name  string
		parts []string
	}{
		{"first", []string{gw("1", "8080"), routeA, routeB("1", "/one"), routeC}},
		{"unchanged", []string{gw("1", "8080"), routeA, routeB("1", "/one"), routeC}},
		{"route edited", []string{gw("1", "8080"), routeA, routeB("2", "/two"), routeC}},
		{"service port changed", []string{gw("1", "8080"), routeA, routeB("2", "/two"), routeC, webPorts("9090")}},
		{"service port back", []string{gw("1", "8080"), routeA, routeB("2", "/two"), routeC, webPorts("8080")}},
		{"grant added", []string{gw("1", "8080"), routeA, routeB("2", "/two"), routeC, grant("1", "Service")}},
		{"grant changed", []string{gw("1", "8080"), routeA, routeB("2", "/two"), routeC, grant("2", "Secret")}},
		{"listener changed", []string{gw("2", "8081"), routeA, routeB("2", "/two"), routeC}},
		{"older route takes the path", []string{gw("2", "8081"), routeA, routeB("2", "/two"), routeC, older}},
		{"route deleted", []string{gw("2", "8081"), routeB("2", "/two"), routeC, older}},
		{"route back", []string{gw("2", "8081"), routeA, routeB("2", "/two"), routeC, older}},
	}
	// One store, as the controller keeps: each step updates the objects
	// whose manifest changed and deletes those it no longer lists, so
	// that the unchanged ones stay the same objects.
	m, err := memory(base)
	if err != nil {
		t.Fatal(err)
	}
	aliases := map[string]string{"Gateway": gatewayapi.AliasGateways, "HTTPRoute": gatewayapi.AliasHTTPRoutes,
		"ReferenceGrant": gatewayapi.AliasReferenceGrants, "Service": gatewayapi.AliasServices}
	baseWeb := webPorts("8080")
	had := map[string]string{} // alias ns/name → its manifest
	cache := &gatewayapi.Cache{}
	ref := gatewayapi.Ref{Namespace: "infra", Name: "gw"}
	var prev string
	for _, step := range steps {
		parts := step.parts
		if !slices.ContainsFunc(parts, func(p string) bool { return strings.Contains(p, "kind: Service\n") }) {
			parts = append(slices.Clone(parts), baseWeb)
		}
		now := map[string]string{}
		for _, p := range parts {
			objs, err := store.DecodeManifests([]byte(p))
			if err != nil || len(objs) != 1 {
				t.Fatalf("%s: %d objects, %v", step.name, len(objs), err)
			}
			o := objs[0]
			md := o["metadata"].(map[string]any)
			ns, _ := md["namespace"].(string)
			alias := aliases[o["kind"].(string)]
			key := alias + " " + ns + "/" + md["name"].(string)
			now[key] = p
			if had[key] == p {
				continue
			}
			if err := m.Update(alias, o); err != nil {
				t.Fatalf("%s: %v", step.name, err)
			}
		}
		for key := range had {
			if _, ok := now[key]; !ok {
				alias, nsName, _ := strings.Cut(key, " ")
				ns, name, _ := strings.Cut(nsName, "/")
				if err := m.Delete(alias, ns, name); err != nil {
					t.Fatalf("%s: %v", step.name, err)
				}
			}
		}
		had = now
		got := gatewayapi.Build(m.Snapshot(), gatewayapi.Options{Cache: cache})
		want := gatewayapi.Build(m.Snapshot(), gatewayapi.Options{})
		if want.RenderContext(ref) == nil {
			t.Fatalf("%s: no context", step.name)
		}
		if diff := cmp.Diff(want.RenderContext(ref), got.RenderContext(ref)); diff != "" {
			t.Fatalf("%s: cached context (-fresh +cached):\n%s", step.name, diff)
		}
		if diff := cmp.Diff(want.Statuses(programmed), got.Statuses(programmed)); diff != "" {
			t.Fatalf("%s: cached statuses (-fresh +cached):\n%s", step.name, diff)
		}
		// The steps change what they say: each context differs from the
		// one before, except where nothing changed.
		out := js(want.RenderContext(ref)) + js(want.Statuses(programmed))
		if out == prev && step.name != "unchanged" {
			t.Errorf("%s: the step changed nothing; the test does not test it", step.name)
		}
		prev = out
	}
}

// TestStatusOnlyBuildHasTheStatusesAndNoContext: a StatusOnly Build
// answers as a full one, without the render context.
func TestStatusOnlyBuildHasTheStatusesAndNoContext(t *testing.T) {
	m, err := memory(base + "\n---\n" + twoListeners + `
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {namespace: infra, name: r, resourceVersion: "1"}
spec:
  parentRefs: [{name: gw}]
  rules: [{backendRefs: [{name: web, port: 8080}, {name: missing, port: 80}]}]
`)
	if err != nil {
		t.Fatal(err)
	}
	ref := gatewayapi.Ref{Namespace: "infra", Name: "gw"}
	full := gatewayapi.Build(m.Snapshot(), gatewayapi.Options{})
	only := gatewayapi.Build(m.Snapshot(), gatewayapi.Options{StatusOnly: true, Cache: &gatewayapi.Cache{}})
	if only.RenderContext(ref) != nil || full.RenderContext(ref) == nil {
		t.Errorf("render context: StatusOnly %v, full %v; want nil and one", only.RenderContext(ref) != nil, full.RenderContext(ref) != nil)
	}
	if diff := cmp.Diff(full.Statuses(programmed), only.Statuses(programmed)); diff != "" {
		t.Errorf("statuses (-full +StatusOnly):\n%s", diff)
	}
	if diff := cmp.Diff(full.Gateways(), only.Gateways()); diff != "" || len(full.Gateways()) != 1 {
		t.Errorf("gateways %v, want %v", only.Gateways(), full.Gateways())
	}
	if diff := cmp.Diff(full.Listeners(ref), only.Listeners(ref)); diff != "" {
		t.Errorf("listeners (-full +StatusOnly):\n%s", diff)
	}
}

// TestCachedBuildOfOneStoreFollowsItsUpdates updates one store in place
// (a Service's port, a route added and deleted) between Builds that
// share a Cache: each equals a fresh Build.
func TestCachedBuildOfOneStoreFollowsItsUpdates(t *testing.T) {
	st, err := memory(base + "\n---\n" + twoListeners + `
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {namespace: infra, name: r, resourceVersion: "1"}
spec:
  parentRefs: [{name: gw}]
  rules: [{backendRefs: [{name: web, port: 8080}]}]
`)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := store.DecodeManifests([]byte(`
apiVersion: v1
kind: Service
metadata: {namespace: infra, name: web, resourceVersion: "2"}
spec: {ports: [{name: http, port: 9090}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {namespace: infra, name: s, resourceVersion: "1"}
spec:
  parentRefs: [{name: gw}]
  hostnames: [s.example.com]
  rules: [{backendRefs: [{name: api, port: 8080}]}]
`))
	if err != nil {
		t.Fatal(err)
	}
	cache := &gatewayapi.Cache{}
	ref := gatewayapi.Ref{Namespace: "infra", Name: "gw"}
	check := func(step string) {
		t.Helper()
		got := gatewayapi.Build(st.Snapshot(), gatewayapi.Options{Cache: cache})
		want := gatewayapi.Build(st.Snapshot(), gatewayapi.Options{})
		if diff := cmp.Diff(want.RenderContext(ref), got.RenderContext(ref)); diff != "" {
			t.Fatalf("%s: cached context (-fresh +cached):\n%s", step, diff)
		}
		if diff := cmp.Diff(want.Statuses(programmed), got.Statuses(programmed)); diff != "" {
			t.Fatalf("%s: cached statuses (-fresh +cached):\n%s", step, diff)
		}
	}
	check("first")
	check("again")
	if err := st.Update(gatewayapi.AliasServices, objs[0]); err != nil {
		t.Fatal(err)
	}
	check("service port changed")
	if err := st.Update(gatewayapi.AliasHTTPRoutes, objs[1]); err != nil {
		t.Fatal(err)
	}
	check("route added")
	if err := st.Delete(gatewayapi.AliasHTTPRoutes, "infra", "s"); err != nil {
		t.Fatal(err)
	}
	check("route deleted")
}
