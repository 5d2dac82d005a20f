package v1alpha1_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	v1alpha1 "github.com/haptic-io/haptic/api/v1alpha1"
)

func TestAgentWithDefaults(t *testing.T) {
	got := v1alpha1.Agent{TokenSecretRef: &v1alpha1.SecretKeyRef{Name: "agent-token"}}.WithDefaults()
	want := v1alpha1.Agent{Port: 5555, TokenSecretRef: &v1alpha1.SecretKeyRef{Name: "agent-token", Key: "token"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("WithDefaults (-want +got):\n%s", diff)
	}
	if got := (v1alpha1.Agent{}).WithDefaults(); got.TokenSecretRef != nil {
		t.Errorf("WithDefaults invented a token Secret: %+v", got.TokenSecretRef)
	}
}

func TestPodSelectorNamespaceDefaultsToTheConfigs(t *testing.T) {
	if got := (v1alpha1.PodSelector{}).NamespaceOr("haptic"); got != "haptic" {
		t.Errorf("NamespaceOr = %q; want haptic", got)
	}
	if got := (v1alpha1.PodSelector{Namespace: "edge"}).NamespaceOr("haptic"); got != "edge" {
		t.Errorf("NamespaceOr = %q; want edge", got)
	}
}
