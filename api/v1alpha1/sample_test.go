package v1alpha1_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1alpha1 "github.com/haptic-io/haptic/api/v1alpha1"
	"github.com/haptic-io/haptic/renderplan"
	"github.com/haptic-io/haptic/templating"
)

// samplePath is the example resource; it must stay the quickstart's
// config (examples/quickstart/config.yaml) plus what a cluster needs.
const samplePath = "examples/kubernetes/haproxytemplateconfig.yaml"

func TestSampleDecodesStrictlyAndCompiles(t *testing.T) {
	c, err := v1alpha1.ParseHAProxyTemplateConfig(readRepoFile(t, samplePath))
	if err != nil {
		t.Fatal(err)
	}
	if c.Name != "quickstart" || c.Namespace != "haptic" {
		t.Errorf("sample is %s/%s; want haptic/quickstart", c.Namespace, c.Name)
	}
	if diff := cmp.Diff(v1alpha1.Dataplane{}.WithDefaults(), c.Spec.Dataplane); diff != "" {
		t.Errorf("sample's dataplane, which says it spells out the defaults (-defaults +sample):\n%s", diff)
	}
	cfg, err := c.Spec.TemplatingConfig()
	if err != nil {
		t.Fatal(err)
	}
	engine, err := templating.Compile(mergeLibraries(t, c.Spec.LibraryNames(), cfg))
	if err != nil {
		t.Fatalf("compile the sample after its libraries: %v", err)
	}
	// haproxy -c is rendergate's checker, tested with a real HAProxy
	// elsewhere; here the template assertions run.
	accept := renderplan.CheckerFunc(func(context.Context, *renderplan.Output) error { return nil })
	if _, err := templating.RunTests(context.Background(), engine, templating.TestOptions{Checker: accept}); err != nil {
		t.Fatalf("validation tests of the sample and its libraries: %v", err)
	}
}

// The sample is the quickstart's config: the same template part, with
// the listen addresses a pod needs added to extraContext.
func TestSampleIsTheQuickstartConfig(t *testing.T) {
	c, err := v1alpha1.ParseHAProxyTemplateConfig(readRepoFile(t, samplePath))
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.Spec.TemplatingConfig()
	if err != nil {
		t.Fatal(err)
	}
	want, err := templating.ParseConfig(readRepoFile(t, "examples/quickstart/config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"httpAddress", "statsAddress"} {
		if got.ExtraContext[k] != "0.0.0.0" {
			t.Errorf("sample's extraContext.%s = %v; want 0.0.0.0", k, got.ExtraContext[k])
		}
		delete(got.ExtraContext, k)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("sample vs quickstart config (-quickstart +sample):\n%s", diff)
	}
	if diff := cmp.Diff(v1alpha1.DefaultLibraries(), c.Spec.LibraryNames()); diff != "" {
		t.Errorf("sample's libraries (-quickstart +sample):\n%s", diff)
	}
}
