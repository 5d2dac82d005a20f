package crdschema_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/install"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	crdvalidation "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	structurallisttype "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/listtype"
	structuralpruning "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// root is the product module's root, seen from this package's directory.
var root = filepath.Join("..", "..", "..")

const samplePath = "examples/kubernetes/haproxytemplateconfig.yaml"

// decode reads YAML or JSON as the API server does: case-sensitive field
// names, unknown and duplicate fields refused, integers kept as int64.
func decode(t *testing.T, b []byte, v any) {
	t.Helper()
	j, err := yaml.YAMLToJSONStrict(b)
	if err != nil {
		t.Fatal(err)
	}
	strict, err := kjson.UnmarshalStrict(j, v)
	if err = errors.Join(append(strict, err)...); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(path)))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// loadCRDs returns every committed CRD in the API server's internal form,
// by file name.
func loadCRDs(t *testing.T) map[string]*apiextensions.CustomResourceDefinition {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(root, "config", "crd", "bases", "*.yaml"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no CRDs under config/crd/bases (%v)", err)
	}
	scheme := runtime.NewScheme()
	install.Install(scheme)
	crds := map[string]*apiextensions.CustomResourceDefinition{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var v1 apiextensionsv1.CustomResourceDefinition
		decode(t, b, &v1)
		var in apiextensions.CustomResourceDefinition
		if err := scheme.Convert(&v1, &in, nil); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		// What the API server's create strategy records before validation.
		in.Status.StoredVersions = []string{in.Spec.Versions[0].Name}
		crds[filepath.Base(p)] = &in
	}
	return crds
}

func TestCRDsPassTheAPIServersCreateValidation(t *testing.T) {
	for name, crd := range loadCRDs(t) {
		t.Run(name, func(t *testing.T) {
			if errs := crdvalidation.ValidateCustomResourceDefinition(context.Background(), crd); len(errs) > 0 {
				t.Errorf("the API server would refuse %s:\n%v", name, errs.ToAggregate())
			}
		})
	}
}

// admission runs a create request's schema steps for one CRD version.
type admission struct {
	structural *structuralschema.Structural
	validator  apiservervalidation.SchemaValidator
	cel        *cel.Validator
}

func newAdmission(t *testing.T, crd *apiextensions.CustomResourceDefinition) *admission {
	t.Helper()
	// The internal form keeps a schema shared by every version at the top.
	props := crd.Spec.Validation
	if props == nil {
		props = crd.Spec.Versions[0].Schema
	}
	if props == nil || props.OpenAPIV3Schema == nil {
		t.Fatalf("CRD %s has no schema", crd.Name)
	}
	return newAdmissionOf(t, props.OpenAPIV3Schema)
}

func newAdmissionOf(t *testing.T, props *apiextensions.JSONSchemaProps) *admission {
	t.Helper()
	s, err := structuralschema.NewStructural(props)
	if err != nil {
		t.Fatal(err)
	}
	v, _, err := apiservervalidation.NewSchemaValidator(props)
	if err != nil {
		t.Fatal(err)
	}
	return &admission{structural: s, validator: v, cel: cel.NewValidator(s, true, celconfig.PerCallLimit)}
}

// admit prunes, defaults and validates obj in place, the way the API
// server handles a create with fieldValidation=Strict (schema, list
// types, CEL rules; not metadata); it returns every refusal, unknown
// fields included.
func (a *admission) admit(obj map[string]any) error {
	var errs []error
	unknown := structuralpruning.PruneWithOptions(obj, a.structural, true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true})
	for _, u := range unknown {
		errs = append(errs, fmt.Errorf("unknown field %q", u))
	}
	structuraldefaulting.PruneNonNullableNullsWithoutDefaults(obj, a.structural)
	structuraldefaulting.Default(obj, a.structural)
	if fe := apiservervalidation.ValidateCustomResource(nil, obj, a.validator); len(fe) > 0 {
		errs = append(errs, fe.ToAggregate())
	}
	if fe := structurallisttype.ValidateListSetsAndMaps(nil, a.structural, obj); len(fe) > 0 {
		errs = append(errs, fe.ToAggregate())
	}
	fe, _ := a.cel.Validate(context.Background(), field.NewPath(""), a.structural, obj, nil, celconfig.RuntimeCELCostBudget)
	if len(fe) > 0 {
		errs = append(errs, fe.ToAggregate())
	}
	return errors.Join(errs...)
}

func sample(t *testing.T) map[string]any {
	t.Helper()
	var obj map[string]any
	decode(t, readFile(t, samplePath), &obj)
	return obj
}

func spec(obj map[string]any) map[string]any { return obj["spec"].(map[string]any) }

func TestSampleIsAdmittedUnchanged(t *testing.T) {
	a := newAdmission(t, loadCRDs(t)["haproxy-haptic.org_haproxytemplateconfigs.yaml"])
	obj := sample(t)
	want := sample(t)
	if err := a.admit(obj); err != nil {
		t.Fatalf("the API server would refuse %s: %v", samplePath, err)
	}
	// It spells out every default, so defaulting adds nothing.
	if diff := cmp.Diff(want, obj); diff != "" {
		t.Errorf("admitted sample (-file +admitted):\n%s", diff)
	}
}

func TestAdmissionDefaultsWhatTheGoAccessorsDefault(t *testing.T) {
	a := newAdmission(t, loadCRDs(t)["haproxy-haptic.org_haproxytemplateconfigs.yaml"])
	obj := sample(t)
	s := spec(obj)
	delete(s, "dataplane")
	s["agent"] = map[string]any{"tokenSecretRef": map[string]any{"name": "agent-token"}}
	s["libraries"] = nil // null: defaulted, like an absent field
	if err := a.admit(obj); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"libraries": []any{"base", "ingress"},
		"dataplane": map[string]any{
			"minDeploymentInterval": "2s", "driftPreventionInterval": "60s", "configPublishInterval": "10s",
			"reloadVerificationTimeout": "60s", "syncTimeout": "2m",
		},
		"agent": map[string]any{"port": int64(5555), "tokenSecretRef": map[string]any{"name": "agent-token", "key": "token"}},
	}
	got := map[string]any{"libraries": s["libraries"], "dataplane": s["dataplane"], "agent": s["agent"]}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("defaulted spec (-want +got):\n%s", diff)
	}

	obj = sample(t)
	spec(obj)["libraries"] = []any{}
	if err := a.admit(obj); err != nil {
		t.Fatal(err)
	}
	if got := spec(obj)["libraries"]; !cmp.Equal(got, []any{}) {
		t.Errorf("libraries: [] became %v; an empty list means no library", got)
	}
}

func TestAdmissionRefusesBadConfigs(t *testing.T) {
	a := newAdmission(t, loadCRDs(t)["haproxy-haptic.org_haproxytemplateconfigs.yaml"])
	dataplane := func(k string, v any) func(map[string]any) {
		return func(s map[string]any) { s["dataplane"].(map[string]any)[k] = v }
	}
	assertion := func(as ...map[string]any) func(map[string]any) {
		return func(s map[string]any) {
			list := []any{}
			for _, x := range as {
				list = append(list, x)
			}
			s["validationTests"] = map[string]any{"t": map[string]any{"assertions": list}}
		}
	}
	tests := []struct {
		name   string
		change func(spec map[string]any)
		want   string // "" means admitted
	}{
		{"min deployment interval 0 disables pacing", dataplane("minDeploymentInterval", "0"), ""},
		{"min deployment interval at the ceiling", dataplane("minDeploymentInterval", "1m"), ""},
		{"min deployment interval over the ceiling", dataplane("minDeploymentInterval", "61s"), "minDeploymentInterval must be at most 60s"},
		{"zero reload verification timeout", dataplane("reloadVerificationTimeout", "0s"), "reloadVerificationTimeout must be positive"},
		{"reload verification over the ceiling", dataplane("reloadVerificationTimeout", "2m"), "at most 60s"},
		{"zero drift prevention", dataplane("driftPreventionInterval", "0"), "driftPreventionInterval must be positive"},
		{"duration not a duration", dataplane("syncTimeout", "soon"), "spec.dataplane.syncTimeout"},
		{"alias not an identifier", func(s map[string]any) {
			s["watchedResources"] = map[string]any{"my-ingresses": map[string]any{"apiVersion": "networking.k8s.io/v1", "resource": "ingresses"}}
		}, "watchedResources aliases must be identifiers"},
		{"watched resource without resource", func(s map[string]any) {
			s["watchedResources"] = map[string]any{"ing": map[string]any{"apiVersion": "networking.k8s.io/v1"}}
		}, "spec.watchedResources.ing.resource: Required value"},
		{"debounce interval 0", func(s map[string]any) {
			s["watchedResources"] = map[string]any{"ing": map[string]any{"apiVersion": "networking.k8s.io/v1", "resource": "ingresses", "debounceInterval": "0"}}
		}, ""},
		{"namespace not a DNS label", func(s map[string]any) {
			s["watchedResources"] = map[string]any{"ing": map[string]any{"apiVersion": "networking.k8s.io/v1", "resource": "ingresses", "namespace": "Shop"}}
		}, "spec.watchedResources.ing.namespace"},
		{"unknown assertion type", assertion(map[string]any{"type": "looks_fine"}), `Unsupported value: "looks_fine"`},
		{"expected a list", assertion(map[string]any{"type": "equals", "expected": []any{"a"}}), "expected"},
		{"expected an integer", assertion(map[string]any{"type": "match_count", "pattern": "x", "expected": int64(2)}), ""},
		{"unknown target", assertion(map[string]any{"type": "contains", "pattern": "x", "target": "haproxy.conf"}), "target"},
		{"map target", assertion(map[string]any{"type": "contains", "pattern": "x", "target": "map:hosts.map"}), ""},
		{"fixtures are objects", func(s map[string]any) {
			s["validationTests"] = map[string]any{"t": map[string]any{"fixtures": map[string]any{"ingresses": []any{"x"}}}}
		}, "fixtures"},
		{"free-form fixtures and extraContext are kept", func(s map[string]any) {
			s["extraContext"] = map[string]any{"any": map[string]any{"thing": []any{int64(1), "two"}}}
			s["validationTests"] = map[string]any{"t": map[string]any{
				"extraContext": map[string]any{"x": true},
				"fixtures":     map[string]any{"ingresses": []any{map[string]any{"kind": "Ingress", "spec": map[string]any{"odd": int64(1)}}}},
			}}
		}, ""},
		{"empty pod selector", func(s map[string]any) { s["podSelector"] = map[string]any{"matchLabels": map[string]any{}} }, "matchLabels"},
		{"no pod selector", func(s map[string]any) { delete(s, "podSelector") }, "spec.podSelector: Required value"},
		{"agent port 0", func(s map[string]any) { s["agent"] = map[string]any{"port": int64(0)} }, "spec.agent.port"},
		{"library listed twice", func(s map[string]any) { s["libraries"] = []any{"base", "base"} }, "Duplicate value"},
		{"library name", func(s map[string]any) { s["libraries"] = []any{"Base"} }, "spec.libraries[0]"},
		{"unknown field", func(s map[string]any) { s["haproxyconfig"] = map[string]any{"template": "x"} }, `unknown field "spec.haproxyconfig"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := sample(t)
			tt.change(spec(obj))
			err := a.admit(obj)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tt.want != "" && err == nil:
				t.Fatalf("admitted; want a refusal containing %q", tt.want)
			case tt.want != "" && !strings.Contains(err.Error(), tt.want):
				t.Fatalf("refused with %v; want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestHAProxyCfgAdmission(t *testing.T) {
	a := newAdmission(t, loadCRDs(t)["haproxy-haptic.org_haproxycfgs.yaml"])
	manifest := func(mode string) map[string]any {
		var obj map[string]any
		decode(t, []byte(`
apiVersion: haproxy-haptic.org/v1alpha1
kind: HAProxyCfg
metadata: {name: quickstart, namespace: haptic}
spec: {configGeneration: 3, planID: p-1, configDigest: 0123456789abcdef, renderedAt: "2026-01-01T00:00:00Z", problems: 2}
status:
  readyPods: 1
  totalPods: 2
  pods:
    - {name: haproxy-0, ip: 10.0.0.7, appliedPlanID: p-1, mode: `+mode+`, lastApplyTime: "2026-01-01T00:00:01Z"}
    - {name: haproxy-1, ip: 10.0.0.8, lastError: "reload: worker did not start"}
`), &obj)
		return obj
	}
	if err := a.admit(manifest("runtime")); err != nil {
		t.Fatalf("refused: %v", err)
	}
	if err := a.admit(manifest("sometimes")); err == nil || !strings.Contains(err.Error(), "status.pods[0].mode") {
		t.Fatalf("mode sometimes: %v; want a refusal of status.pods[0].mode", err)
	}
}

// The schema is no stricter than the config file's parser: every stock
// library, pasted under spec:, is admitted as it is.
func TestAdmissionAcceptsEveryStockLibraryAsASpec(t *testing.T) {
	a := newAdmission(t, loadCRDs(t)["haproxy-haptic.org_haproxytemplateconfigs.yaml"])
	paths, err := filepath.Glob(filepath.Join(root, "libraries", "*.yaml"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no libraries (%v)", err)
	}
	for _, p := range paths {
		t.Run(filepath.Base(p), func(t *testing.T) {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			var s map[string]any
			decode(t, b, &s)
			want := map[string]any{}
			for k, v := range s {
				want[k] = v
			}
			s["podSelector"] = map[string]any{"matchLabels": map[string]any{"app": "haproxy"}}
			obj := map[string]any{
				"apiVersion": "haproxy-haptic.org/v1alpha1", "kind": "HAProxyTemplateConfig",
				"metadata": map[string]any{"name": "lib", "namespace": "haptic"},
				"spec":     s,
			}
			if err := a.admit(obj); err != nil {
				t.Fatalf("refused: %v", err)
			}
			for k := range want {
				if diff := cmp.Diff(want[k], s[k]); diff != "" {
					t.Errorf("admission changed spec.%s (-library +admitted):\n%s", k, diff)
				}
			}
		})
	}
}
