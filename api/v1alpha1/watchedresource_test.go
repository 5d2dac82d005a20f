package v1alpha1_test

import (
	"testing"

	v1alpha1 "github.com/haptic-io/haptic/api/v1alpha1"
)

func TestWatchedResourcesForAddsTheSpecsKubernetesFields(t *testing.T) {
	spec, err := v1alpha1.SpecFromYAML([]byte(`
watchedResources:
  ingresses:
    apiVersion: networking.k8s.io/v1
    resource: ingresses
    indexBy: ["metadata.namespace", "metadata.name"]
    namespace: shop
    debounceInterval: 500ms
`))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := spec.TemplatingConfig()
	if err != nil {
		t.Fatal(err)
	}
	merged := mergeLibraries(t, spec.LibraryNames(), cfg)
	got := spec.WatchedResourcesFor(merged)
	if len(got) != len(merged.WatchedResources) {
		t.Fatalf("got %d watched resources; want %d", len(got), len(merged.WatchedResources))
	}
	ing := got["ingresses"]
	if d, _ := ing.Debounce(); ing.Namespace != "shop" || d.String() != "500ms" {
		t.Errorf("ingresses = %+v; want namespace shop, debounceInterval 500ms", ing)
	}
	if svc := got["services"]; svc.Namespace != "" || svc.DebounceInterval != nil || svc.Resource != "services" {
		t.Errorf("services (library only) = %+v; want no Kubernetes-only fields", svc)
	}
}
