package v1alpha1_test

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1alpha1 "github.com/haptic-io/haptic/api/v1alpha1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// loadCRD decodes a committed CRD strictly, as the API server would.
func loadCRD(t *testing.T, plural string) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	b := readRepoFile(t, filepath.ToSlash(filepath.Join("config", "crd", "bases", v1alpha1.GroupName+"_"+plural+".yaml")))
	j, err := yaml.YAMLToJSONStrict(b)
	if err != nil {
		t.Fatal(err)
	}
	var crd apiextensionsv1.CustomResourceDefinition
	strict, err := kjson.UnmarshalStrict(j, &crd)
	if err = errors.Join(append(strict, err)...); err != nil {
		t.Fatalf("CRD %s: %v", plural, err)
	}
	return &crd
}

type column struct{ Name, Type, JSONPath string }

func TestCommittedCRDsDescribeTheKinds(t *testing.T) {
	tests := []struct {
		plural, kind, shortName string
		columns                 []column
	}{
		{
			plural: v1alpha1.ResourceHAProxyTemplateConfig, kind: v1alpha1.KindHAProxyTemplateConfig, shortName: "htc",
			columns: []column{
				{"Validated", "string", `.status.conditions[?(@.type=="Validated")].status`},
				{"Ready", "string", `.status.conditions[?(@.type=="Ready")].status`},
				{"Plan", "string", ".status.validatedPlanID"},
				{"Reason", "string", `.status.conditions[?(@.type=="Ready")].reason`},
				{"Age", "date", ".metadata.creationTimestamp"},
			},
		},
		{
			plural: v1alpha1.ResourceHAProxyCfg, kind: v1alpha1.KindHAProxyCfg, shortName: "hcfg",
			columns: []column{
				{"Plan", "string", ".spec.planID"},
				{"Ready", "integer", ".status.readyPods"},
				{"Pods", "integer", ".status.totalPods"},
				{"Problems", "integer", ".spec.problems"},
				{"Rendered", "date", ".spec.renderedAt"},
				{"Age", "date", ".metadata.creationTimestamp"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.kind, func(t *testing.T) {
			crd := loadCRD(t, tt.plural)
			if crd.APIVersion != "apiextensions.k8s.io/v1" || crd.Kind != "CustomResourceDefinition" {
				t.Errorf("apiVersion/kind = %s/%s", crd.APIVersion, crd.Kind)
			}
			if want := tt.plural + "." + v1alpha1.GroupName; crd.Name != want {
				t.Errorf("name = %q; want %q", crd.Name, want)
			}
			s := crd.Spec
			if s.Group != v1alpha1.GroupName || s.Scope != apiextensionsv1.NamespaceScoped ||
				s.Names.Kind != tt.kind || s.Names.Plural != tt.plural ||
				!cmp.Equal(s.Names.ShortNames, []string{tt.shortName}) {
				t.Errorf("group %q, scope %q, names %+v", s.Group, s.Scope, s.Names)
			}
			if len(s.Versions) != 1 {
				t.Fatalf("%d versions; want 1", len(s.Versions))
			}
			v := s.Versions[0]
			if v.Name != v1alpha1.GroupVersion.Version || !v.Served || !v.Storage {
				t.Errorf("version %q served=%v storage=%v", v.Name, v.Served, v.Storage)
			}
			if v.Subresources == nil || v.Subresources.Status == nil {
				t.Errorf("no status subresource")
			}
			var got []column
			for _, c := range v.AdditionalPrinterColumns {
				got = append(got, column{c.Name, c.Type, c.JSONPath})
			}
			if diff := cmp.Diff(tt.columns, got); diff != "" {
				t.Errorf("printer columns (-want +got):\n%s", diff)
			}
		})
	}
}

// The schema's defaults are the ones the Go accessors apply: an object
// the API server defaulted and one defaulted in Go agree.
func TestCRDDefaultsMatchTheGoDefaults(t *testing.T) {
	crd := loadCRD(t, v1alpha1.ResourceHAProxyTemplateConfig)
	spec := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
	defaultOf := func(t *testing.T, s apiextensionsv1.JSONSchemaProps, path ...string) any {
		t.Helper()
		for _, p := range path {
			var ok bool
			if s, ok = s.Properties[p]; !ok {
				t.Fatalf("schema has no %v", path)
			}
		}
		if s.Default == nil {
			t.Fatalf("%v has no default", path)
		}
		var v any
		if err := json.Unmarshal(s.Default.Raw, &v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	d := v1alpha1.Dataplane{}.WithDefaults()
	durations := []struct {
		field string
		want  time.Duration
	}{
		{"minDeploymentInterval", d.MinDeploymentInterval.Duration},
		{"driftPreventionInterval", d.DriftPreventionInterval.Duration},
		{"configPublishInterval", d.ConfigPublishInterval.Duration},
		{"reloadVerificationTimeout", d.ReloadVerificationTimeout.Duration},
		{"syncTimeout", d.SyncTimeout.Duration},
	}
	for _, tt := range durations {
		s, _ := defaultOf(t, spec, "dataplane", tt.field).(string)
		if got, err := time.ParseDuration(s); err != nil || got != tt.want {
			t.Errorf("default of spec.dataplane.%s = %q; want %s", tt.field, s, tt.want)
		}
	}
	a := v1alpha1.Agent{TokenSecretRef: &v1alpha1.SecretKeyRef{}}.WithDefaults()
	var libs []any
	for _, l := range v1alpha1.DefaultLibraries() {
		libs = append(libs, l)
	}
	others := []struct {
		path []string
		want any
	}{
		{[]string{"agent", "port"}, float64(a.Port)},
		{[]string{"agent", "tokenSecretRef", "key"}, a.TokenSecretRef.Key},
		{[]string{"libraries"}, libs},
		// Empty objects, so that the API server defaults their fields.
		{[]string{"dataplane"}, map[string]any{}},
		{[]string{"agent"}, map[string]any{}},
	}
	for _, tt := range others {
		if diff := cmp.Diff(tt.want, defaultOf(t, spec, tt.path...)); diff != "" {
			t.Errorf("default of spec.%s (-go +schema):\n%s", strings.Join(tt.path, "."), diff)
		}
	}
}
