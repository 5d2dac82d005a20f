package gatewayapi_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/haptic-io/haptic/gatewayapi"
	"github.com/haptic-io/haptic/store"
)

// fuzzKinds assigns the decoded objects of a fuzz input to aliases: an
// object with a known kind goes where it belongs; any other goes to the
// alias its position picks, so that every alias sees every shape.
var fuzzKinds = []struct{ alias, apiVersion, kind string }{
	{gatewayapi.AliasGatewayClasses, "gateway.networking.k8s.io/v1", "GatewayClass"},
	{gatewayapi.AliasGateways, "gateway.networking.k8s.io/v1", "Gateway"},
	{gatewayapi.AliasHTTPRoutes, "gateway.networking.k8s.io/v1", "HTTPRoute"},
	{gatewayapi.AliasGRPCRoutes, "gateway.networking.k8s.io/v1", "GRPCRoute"},
	{gatewayapi.AliasTLSRoutes, "gateway.networking.k8s.io/v1", "TLSRoute"},
	{gatewayapi.AliasReferenceGrants, "gateway.networking.k8s.io/v1", "ReferenceGrant"},
	{gatewayapi.AliasServices, "v1", "Service"},
	{gatewayapi.AliasSecrets, "v1", "Secret"},
	{gatewayapi.AliasNamespaces, "v1", "Namespace"},
}

// FuzzBuild: Build never panics on any object shape; its statuses and
// render contexts are JSON-encodable and deterministic, and every map
// key and value of a context is free of whitespace and control
// characters (they become map file lines).
func FuzzBuild(f *testing.F) {
	f.Add([]byte(base + "\n---\n" + coreFuzzSeed))
	f.Add([]byte(base + "\n---\n" + extendedFuzzSeed))
	f.Add([]byte("kind: Gateway\nmetadata: {namespace: a, name: b}\nspec: {gatewayClassName: haptic, listeners: [{name: x, port: 70000, protocol: HTTP, hostname: \"*\"}]}\n"))
	f.Add([]byte("kind: HTTPRoute\nmetadata: {namespace: a, name: r}\nspec: {parentRefs: 3, rules: [{matches: [{path: {value: \"/a b\"}}]}]}\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		done := make(chan struct{})
		defer close(done)
		go func() {
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				panic(fmt.Sprintf("FuzzBuild: no result after 10s for %q", b))
			}
		}()
		objs, err := store.DecodeManifests(b)
		if err != nil {
			return
		}
		m, err := store.NewMemory(gatewayapi.WatchedResources())
		if err != nil {
			t.Fatal(err)
		}
		// part holds every other object: a cached Build of it, then one
		// of the whole store, then one of part again, must each equal a
		// fresh Build, so that what one Build keeps never leaks into a
		// Build of a store that changed.
		part, err := store.NewMemory(gatewayapi.WatchedResources())
		if err != nil {
			t.Fatal(err)
		}
		for i, o := range objs {
			k := fuzzKinds[i%len(fuzzKinds)]
			for _, fk := range fuzzKinds {
				if o["kind"] == fk.kind {
					k = fk
				}
			}
			o["apiVersion"], o["kind"] = k.apiVersion, k.kind
			if md, ok := o["metadata"].(map[string]any); !ok || md["name"] == nil {
				o["metadata"] = map[string]any{"namespace": "a", "name": "n" + string(rune('a'+i%26))}
			}
			_ = m.Add(k.alias, o)
			if i%2 == 0 {
				_ = part.Add(k.alias, o)
			}
		}
		snap := m.Snapshot()
		partSnap := part.Snapshot()
		model := gatewayapi.Build(snap, gatewayapi.Options{})
		again := gatewayapi.Build(snap, gatewayapi.Options{})
		// A Cache changes nothing: the second cached Build reuses what
		// the first one resolved, and the statuses it made.
		fleet := func(gatewayapi.Ref) gatewayapi.Fleet {
			return gatewayapi.Fleet{Addresses: []string{"10.0.0.1"}, ProgrammedGeneration: 1}
		}
		cache := &gatewayapi.Cache{}
		sameAsFresh(t, gatewayapi.Build(partSnap, gatewayapi.Options{Cache: cache}), gatewayapi.Build(partSnap, gatewayapi.Options{}), fleet)
		grown := gatewayapi.Build(snap, gatewayapi.Options{Cache: cache})
		sameAsFresh(t, grown, model, fleet)
		sameAsFresh(t, gatewayapi.Build(partSnap, gatewayapi.Options{Cache: cache}), gatewayapi.Build(partSnap, gatewayapi.Options{}), fleet)
		gatewayapi.Build(snap, gatewayapi.Options{Cache: cache}).Statuses(fleet)
		cached := gatewayapi.Build(snap, gatewayapi.Options{Cache: cache})
		sts := model.Statuses(fleet)
		if !reflect.DeepEqual(sts, again.Statuses(fleet)) {
			t.Fatal("statuses differ between two builds of the same store")
		}
		if !reflect.DeepEqual(sts, cached.Statuses(fleet)) {
			t.Fatal("statuses differ with a Cache")
		}
		for _, st := range sts {
			if _, err := json.Marshal(st.Status); err != nil {
				t.Fatalf("status of %s %s/%s: %v", st.Kind, st.Namespace, st.Name, err)
			}
			_ = gatewayapi.WithTransitionTimes(st, st.Status, time.Unix(0, 0))
		}
		for _, ref := range model.Gateways() {
			ctx := model.RenderContext(ref)
			if !reflect.DeepEqual(ctx, again.RenderContext(ref)) {
				t.Fatalf("render context of %s differs between two builds", ref)
			}
			if !reflect.DeepEqual(ctx, cached.RenderContext(ref)) {
				t.Fatalf("render context of %s differs with a Cache", ref)
			}
			if _, err := json.Marshal(ctx); err != nil {
				t.Fatalf("render context of %s: %v", ref, err)
			}
			checkMaps(t, ctx)
			_ = model.Listeners(ref)
		}
		// Routes deleted one by one from the same store, the Gateways
		// unchanged: each cached Build reattaches the other routes as
		// the one before did, and equals a fresh Build.
		for _, o := range objs {
			alias, _ := fuzzAlias(o)
			if alias != gatewayapi.AliasHTTPRoutes && alias != gatewayapi.AliasGRPCRoutes && alias != gatewayapi.AliasTLSRoutes {
				continue
			}
			md, _ := o["metadata"].(map[string]any)
			ns, _ := md["namespace"].(string)
			name, _ := md["name"].(string)
			if m.Delete(alias, ns, name) != nil {
				continue
			}
			snap := m.Snapshot()
			sameAsFresh(t, gatewayapi.Build(snap, gatewayapi.Options{Cache: cache}), gatewayapi.Build(snap, gatewayapi.Options{}), fleet)
		}
	})
}

// fuzzAlias is the alias FuzzBuild stored o under, by its kind.
func fuzzAlias(o map[string]any) (string, bool) {
	for _, fk := range fuzzKinds {
		if o["kind"] == fk.kind {
			return fk.alias, true
		}
	}
	return "", false
}

// sameAsFresh fails t unless cached, a Build with a Cache, has the
// statuses and render contexts of fresh, a Build of the same store
// without one.
func sameAsFresh(t *testing.T, cached, fresh *gatewayapi.Model, fleet func(gatewayapi.Ref) gatewayapi.Fleet) {
	t.Helper()
	if !reflect.DeepEqual(cached.Statuses(fleet), fresh.Statuses(fleet)) {
		t.Fatal("statuses of a cached Build differ from a fresh Build")
	}
	if !reflect.DeepEqual(cached.Gateways(), fresh.Gateways()) {
		t.Fatal("Gateways of a cached Build differ from a fresh Build")
	}
	for _, ref := range fresh.Gateways() {
		if !reflect.DeepEqual(cached.RenderContext(ref), fresh.RenderContext(ref)) {
			t.Fatalf("render context of %s: a cached Build differs from a fresh Build", ref)
		}
	}
}

func checkMaps(t *testing.T, ctx map[string]any) {
	t.Helper()
	ms, _ := ctx["maps"].(map[string]any)
	names := make([]string, 0, len(ms))
	for n := range ms {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		for _, e := range ms[n].([]any) {
			em := e.(map[string]any)
			for _, s := range []string{em["key"].(string), em["value"].(string)} {
				if s == "" || strings.ContainsFunc(s, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
					t.Fatalf("map %s: entry %q %q has whitespace or control characters", n, em["key"], em["value"])
				}
			}
		}
	}
}

const coreFuzzSeed = `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {namespace: infra, name: gw, generation: 1}
spec:
  gatewayClassName: haptic
  listeners:
  - {name: http, port: 80, protocol: HTTP, hostname: "*.example.com", allowedRoutes: {namespaces: {from: All}}}
  - {name: https, port: 443, protocol: HTTPS, tls: {certificateRefs: [{name: missing}]}}
  - {name: tls, port: 8443, protocol: TLS, tls: {mode: Passthrough}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {namespace: infra, name: r}
spec:
  parentRefs: [{name: gw}]
  hostnames: [a.example.com]
  rules:
  - matches: [{path: {type: PathPrefix, value: /a/}, headers: [{name: x, value: "y z"}], queryParams: [{name: q, type: RegularExpression, value: "^a"}], method: GET}]
    filters:
    - {type: RequestRedirect, requestRedirect: {path: {type: ReplacePrefixMatch, replacePrefixMatch: /b}}}
    backendRefs: [{name: web, port: 8080, weight: 2}, {name: api, port: 8080}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: GRPCRoute
metadata: {namespace: infra, name: g}
spec:
  parentRefs: [{name: gw}]
  rules: [{matches: [{method: {service: pkg.Svc, method: Get}}], backendRefs: [{name: api, port: 8080}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: TLSRoute
metadata: {namespace: infra, name: t}
spec:
  parentRefs: [{name: gw, sectionName: tls}]
  hostnames: [t.example.com]
  rules: [{backendRefs: [{name: web, port: 8080}]}]
`
