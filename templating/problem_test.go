package templating_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/haptic-io/haptic/templating"
)

func TestProblemsAboutAWatchedObjectCarryItsIdentity(t *testing.T) {
	ing := map[string]any{"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": map[string]any{"namespace": "ns", "name": "web"}}
	_, problems := renderTemplate(t, `{{ problem "Ingress ns/web" "A" "a" }}{{ problem "Ingress ns/web" "B" "b" }}
{{- problem "Ingress ns/gone" "A" "a" }}{{ problem "Service ns/web" "A" "a" }}{{ problem "backend be_x" "A" "a" }}{{ problem "Ingress ns/web x" "A" "a" }}
`, ing)
	web := templating.ObjectRef{APIVersion: "networking.k8s.io/v1", Kind: "Ingress", Namespace: "ns", Name: "web"}
	want := []templating.Problem{
		{Object: "Ingress ns/gone", Reason: "A", Message: "a"}, // not in the store
		{Object: "Ingress ns/web", Ref: web, Reason: "A", Message: "a"},
		{Object: "Ingress ns/web", Ref: web, Reason: "B", Message: "b"},
		{Object: "Ingress ns/web x", Reason: "A", Message: "a"},
		{Object: "Service ns/web", Reason: "A", Message: "a"}, // another kind
		{Object: "backend be_x", Reason: "A", Message: "a"},
	}
	if diff := cmp.Diff(want, problems); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
	if got := web.String(); got != "Ingress ns/web" {
		t.Errorf("String() = %q", got)
	}
	if got := (templating.ObjectRef{Kind: "Namespace", Name: "ns"}).String(); got != "Namespace ns" {
		t.Errorf("cluster-scoped String() = %q", got)
	}
}
