package gatewayapi_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/haptic-io/haptic/gatewayapi"
	"github.com/haptic-io/haptic/store"
)

// A cached Build of a snapshot that changed only in aliases Build does
// not read returns the last Build's Model; a change to one it reads, or
// other options, builds anew.
func TestCachedBuildOfAStoreChangedElsewhereIsTheLastModel(t *testing.T) {
	resources := gatewayapi.WatchedResources()
	resources["endpointslices"] = store.WatchedResource{APIVersion: "discovery.k8s.io/v1", Resource: "endpointslices", IndexBy: []string{"metadata.namespace", "metadata.name"}}
	st, err := store.NewMemory(resources)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := store.DecodeManifests([]byte(base + twoGateways + webOnBoth))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.AddObjects(objs...); err != nil {
		t.Fatal(err)
	}
	slice := func(ip string) map[string]any {
		return map[string]any{"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
			"metadata":  map[string]any{"namespace": "apps", "name": "web-1", "labels": map[string]any{"kubernetes.io/service-name": "web"}},
			"endpoints": []any{map[string]any{"addresses": []any{ip}}}}
	}
	cache := &gatewayapi.Cache{}
	opts := gatewayapi.Options{Cache: cache}
	first := gatewayapi.Build(st.Snapshot(), opts)

	if err := st.Update("endpointslices", slice("10.0.0.1")); err != nil {
		t.Fatal(err)
	}
	if got := gatewayapi.Build(st.Snapshot(), opts); got != first {
		t.Fatal("an EndpointSlice change built a new Model; want the last one")
	}
	if got := gatewayapi.Build(st.Snapshot(), gatewayapi.Options{Cache: cache, RenderGateway: gatewayapi.Ref{Namespace: "infra", Name: "one"}}); got == first {
		t.Fatal("other options got the last Model")
	}
	again := gatewayapi.Build(st.Snapshot(), opts)
	if again == first {
		t.Fatal("the options went back: want a Build, the last one had others")
	}

	svc := objs[len(objs)-2]
	svc2 := map[string]any{"apiVersion": "v1", "kind": "Service", "metadata": svc["metadata"], "spec": map[string]any{"ports": []any{map[string]any{"port": int64(9090)}}}}
	if err := st.Update(gatewayapi.AliasServices, svc2); err != nil {
		t.Fatal(err)
	}
	changed := gatewayapi.Build(st.Snapshot(), opts)
	if changed == again {
		t.Fatal("a Service change got the last Model")
	}
	fresh := gatewayapi.Build(st.Snapshot(), gatewayapi.Options{})
	ref := gatewayapi.Ref{Namespace: "infra", Name: "one"}
	if diff := cmp.Diff(fresh.RenderContext(ref), changed.RenderContext(ref)); diff != "" {
		t.Fatalf("after the Service change (-fresh +cached):\n%s", diff)
	}
}
