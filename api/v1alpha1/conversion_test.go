package v1alpha1_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1alpha1 "github.com/haptic-io/haptic/api/v1alpha1"
	"github.com/haptic-io/haptic/libraries"
	"github.com/haptic-io/haptic/store"
	"k8s.io/apimachinery/pkg/runtime"
)

// A stock library is a templating config document; as a spec it must come
// back from TemplatingConfig as the very config libraries.Load parses.
func TestSpecFromYAMLOfEveryLibraryRoundTrips(t *testing.T) {
	for _, name := range libraries.Names() {
		t.Run(name, func(t *testing.T) {
			src, err := libraries.Source(name)
			if err != nil {
				t.Fatal(err)
			}
			want, err := libraries.Load(name)
			if err != nil {
				t.Fatal(err)
			}
			spec, err := v1alpha1.SpecFromYAML(src)
			if err != nil {
				t.Fatal(err)
			}
			got, err := spec.TemplatingConfig()
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want[0], got); diff != "" {
				t.Errorf("TemplatingConfig of library %s (-want +got):\n%s", name, diff)
			}
		})
	}
}

func TestTemplatingConfigDropsKubernetesOnlyFields(t *testing.T) {
	spec, err := v1alpha1.SpecFromYAML([]byte(`
libraries: []
watchedResources:
  ingresses:
    apiVersion: networking.k8s.io/v1
    resource: ingresses
    indexBy: ["metadata.namespace", "metadata.name"]
    namespace: shop
    labelSelector: "expose=true"
    fieldSelector: "metadata.name!=skip"
    debounceInterval: "0"
podSelector: {matchLabels: {app: haproxy}}
dataplane: {syncTimeout: 30s}
agent: {port: 6000}
`))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := spec.TemplatingConfig()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]store.WatchedResource{
		"ingresses": {APIVersion: "networking.k8s.io/v1", Resource: "ingresses", IndexBy: []string{"metadata.namespace", "metadata.name"}},
	}
	if diff := cmp.Diff(want, cfg.WatchedResources); diff != "" {
		t.Errorf("watchedResources (-want +got):\n%s", diff)
	}
	if err := spec.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
	if d, set := spec.WatchedResources["ingresses"].Debounce(); d != 0 || !set {
		t.Errorf("Debounce() = %v, %v; want 0, true (disabled)", d, set)
	}
}

// The spec is checked by the parser of the config file: what a file may
// not hold, a spec may not either.
func TestTemplatingConfigRejectsWhatParseConfigRejects(t *testing.T) {
	tests := []struct {
		name, yaml, want string
	}{
		{
			name: "alias not an identifier",
			yaml: `watchedResources: {my-ingresses: {apiVersion: networking.k8s.io/v1, resource: ingresses}}`,
			want: `watchedResources "my-ingresses": alias must be an identifier`,
		},
		{
			name: "bad indexBy",
			yaml: `watchedResources: {ing: {apiVersion: networking.k8s.io/v1, resource: ingresses, indexBy: ["metadata..name"]}}`,
			want: `watchedResources "ing": indexBy`,
		},
		{
			name: "fixtures of an unknown alias",
			yaml: `validationTests: {t: {fixtures: {nope: [{kind: Service}]}, assertions: [{type: deterministic}]}}`,
			want: `fixtures for unknown alias "nope"`,
		},
		{
			name: "match_count with a string",
			yaml: `validationTests: {t: {assertions: [{type: match_count, pattern: x, expected: "3"}]}}`,
			want: "match_count: expected must be a non-negative integer",
		},
		{
			name: "equals with an integer",
			yaml: `validationTests: {t: {assertions: [{type: equals, expected: 3}]}}`,
			want: "equals: expected must be a string",
		},
		{
			name: "map name escapes",
			yaml: `maps: {../x.map: {template: ""}}`,
			want: `maps "../x.map"`,
		},
		{
			name: "extraContext not an object",
			yaml: `extraContext: [1, 2]`,
			want: "parse config",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := v1alpha1.SpecFromYAML([]byte(tt.yaml))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("SpecFromYAML error = %v; want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestSpecFromYAMLIsStrict(t *testing.T) {
	for name, doc := range map[string]string{
		"unknown top-level field":  "haproxyconfig: {template: x}",
		"unknown nested field":     "watchedResources: {ing: {apiVersion: v1, resource: services, namespaces: [a]}}",
		"duplicate field":          "snippets: {a: {template: x}}\nsnippets: {b: {template: y}}",
		"bad debounce duration":    "watchedResources: {ing: {apiVersion: v1, resource: services, debounceInterval: soon}}",
		"expected is a list":       "validationTests: {t: {assertions: [{type: equals, expected: [a]}]}}",
		"fixture is not an object": "watchedResources: {svc: {apiVersion: v1, resource: services}}\nvalidationTests: {t: {fixtures: {svc: [3]}}}",
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := v1alpha1.SpecFromYAML([]byte(doc)); err == nil {
				t.Fatalf("SpecFromYAML(%q) = nil error; want one", doc)
			}
		})
	}
}

func TestTemplatingConfigKeepsFreeFormValues(t *testing.T) {
	spec := &v1alpha1.HAProxyTemplateConfigSpec{
		ExtraContext: &runtime.RawExtension{Raw: []byte(`{"port": 8080, "ratio": 0.5, "tags": ["a"], "nested": {"on": true}}`)},
	}
	cfg, err := spec.TemplatingConfig()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"port":   int64(8080), // integral numbers as int64, as in unstructured objects
		"ratio":  0.5,
		"tags":   []any{"a"},
		"nested": map[string]any{"on": true},
	}
	if diff := cmp.Diff(want, cfg.ExtraContext); diff != "" {
		t.Errorf("extraContext (-want +got):\n%s", diff)
	}
}
