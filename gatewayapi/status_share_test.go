package gatewayapi_test

import (
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/haptic-io/haptic/gatewayapi"
	"github.com/haptic-io/haptic/store"
)

// TestStatusesShareWhatDidNotChange: Builds through one Cache return the
// very same status map for a route whose status did not change (a
// writer compares them by identity), and a new one, equal to a fresh
// Build's, for a route whose object or parents changed.
func TestStatusesShareWhatDidNotChange(t *testing.T) {
	gateway := func(rv, altName string) string {
		return `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {namespace: infra, name: gw, generation: ` + rv + `, resourceVersion: "` + rv + `"}
spec:
  gatewayClassName: haptic
  listeners:
  - {name: http, port: 80, protocol: HTTP}
  - {name: ` + altName + `, port: 8080, protocol: HTTP}
`
	}
	route := func(name, rv, section string) string {
		return `
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {namespace: infra, name: ` + name + `, resourceVersion: "` + rv + `", generation: ` + rv + `}
spec:
  parentRefs: [{name: gw, sectionName: ` + section + `}]
  rules: [{backendRefs: [{name: web, port: 8080}]}]
`
	}
	st, err := memory(base + "\n---\n" + gateway("1", "alt") + "\n---\n" + route("a", "1", "alt") + "\n---\n" + route("b", "1", "http"))
	if err != nil {
		t.Fatal(err)
	}
	update := func(alias, manifest string) {
		t.Helper()
		objs, err := store.DecodeManifests([]byte(manifest))
		if err != nil || len(objs) != 1 {
			t.Fatalf("%d objects, %v", len(objs), err)
		}
		if err := st.Update(alias, objs[0]); err != nil {
			t.Fatal(err)
		}
	}
	cache := &gatewayapi.Cache{}
	statuses := func(step string) map[string]map[string]any {
		t.Helper()
		return routeStatuses(t, st, gatewayapi.Options{Cache: cache, StatusOnly: true}, step)
	}

	first := statuses("first")
	again := statuses("again")
	if !sameMap(first["a"], again["a"]) || !sameMap(first["b"], again["b"]) {
		t.Error("again: an unchanged route's status was made anew")
	}

	update(gatewayapi.AliasHTTPRoutes, route("b", "2", "http"))
	edited := statuses("b edited")
	if !sameMap(again["a"], edited["a"]) {
		t.Error("b edited: a's status was made anew")
	}
	if sameMap(again["b"], edited["b"]) {
		t.Error("b edited: b's status is the map of its old generation")
	}

	// The listener a attaches to goes: a's parent conditions change.
	update(gatewayapi.AliasGateways, gateway("2", "other"))
	moved := statuses("listener renamed")
	if sameMap(edited["a"], moved["a"]) || cmp.Equal(edited["a"], moved["a"]) {
		t.Error("listener renamed: a's status did not change")
	}
	if !sameMap(edited["b"], moved["b"]) {
		t.Error("listener renamed: b's status was made anew")
	}
}

// TestCacheKnowsObjectsWithoutResourceVersion: objects from files carry
// no resourceVersion, and the Cache still knows each by its identity in
// the store. An unchanged route keeps its status map; a ReferenceGrant
// replaced by another of the same name (no version tells them apart)
// resolves the route that depends on it again.
func TestCacheKnowsObjectsWithoutResourceVersion(t *testing.T) {
	grant := func(toKind string) string {
		return `
apiVersion: gateway.networking.k8s.io/v1
kind: ReferenceGrant
metadata: {namespace: apps, name: infra-routes}
spec:
  from: [{group: gateway.networking.k8s.io, kind: HTTPRoute, namespace: infra}]
  to: [{group: "", kind: ` + toKind + `}]
`
	}
	st, err := memory(base + "\n---\n" + oneListener + `
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {namespace: infra, name: local, generation: 1}
spec:
  parentRefs: [{name: gw}]
  rules: [{backendRefs: [{name: web, port: 8080}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {namespace: infra, name: across, generation: 1}
spec:
  parentRefs: [{name: gw}]
  hostnames: [across.example.com]
  rules: [{backendRefs: [{name: web, namespace: apps, port: 8080}]}]
---` + grant("Service"))
	if err != nil {
		t.Fatal(err)
	}
	cache := &gatewayapi.Cache{}
	statuses := func(step string) map[string]map[string]any {
		t.Helper()
		return routeStatuses(t, st, gatewayapi.Options{Cache: cache}, step)
	}

	first := statuses("first")
	again := statuses("again")
	if !sameMap(first["local"], again["local"]) || !sameMap(first["across"], again["across"]) {
		t.Error("again: the status of an unchanged route without resourceVersion was made anew")
	}

	objs, err := store.DecodeManifests([]byte(grant("Secret")))
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Update(gatewayapi.AliasReferenceGrants, objs[0]); err != nil {
		t.Fatal(err)
	}
	regranted := statuses("grant replaced")
	if !sameMap(again["local"], regranted["local"]) {
		t.Error("grant replaced: the status of a route that reads no grant was made anew")
	}
	if cmp.Equal(again["across"], regranted["across"]) {
		t.Error("grant replaced: the route whose Service the grant no longer allows kept its status")
	}
}

// routeStatuses builds st with opts and without a Cache, fails the test
// unless the statuses are the same, and returns the HTTPRoute statuses of
// the Build with opts by name.
func routeStatuses(t *testing.T, st *store.Memory, opts gatewayapi.Options, step string) map[string]map[string]any {
	t.Helper()
	got := gatewayapi.Build(st.Snapshot(), opts).Statuses(programmed)
	want := gatewayapi.Build(st.Snapshot(), gatewayapi.Options{}).Statuses(programmed)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("%s: cached statuses (-fresh +cached):\n%s", step, diff)
	}
	out := map[string]map[string]any{}
	for _, s := range got {
		if s.Kind == "HTTPRoute" {
			out[s.Name] = s.Status
		}
	}
	return out
}

// sameMap says whether a and b are the very same map.
func sameMap(a, b map[string]any) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}
