package v1alpha1_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1alpha1 "github.com/haptic-io/haptic/api/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestDataplaneWithDefaultsFillsOnlyUnsetFields(t *testing.T) {
	in := v1alpha1.Dataplane{
		MinDeploymentInterval: &metav1.Duration{}, // 0: pacing disabled, not unset
		SyncTimeout:           &metav1.Duration{Duration: 30 * time.Second},
	}
	got := in.WithDefaults()
	want := v1alpha1.Dataplane{
		MinDeploymentInterval:     &metav1.Duration{},
		DriftPreventionInterval:   &metav1.Duration{Duration: 60 * time.Second},
		ConfigPublishInterval:     &metav1.Duration{Duration: 10 * time.Second},
		ReloadVerificationTimeout: &metav1.Duration{Duration: 60 * time.Second},
		SyncTimeout:               &metav1.Duration{Duration: 30 * time.Second},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("WithDefaults (-want +got):\n%s", diff)
	}
	got.SyncTimeout.Duration = time.Hour
	if in.SyncTimeout.Duration != 30*time.Second {
		t.Errorf("WithDefaults shares SyncTimeout with its receiver")
	}
}
