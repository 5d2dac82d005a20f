package v1alpha1_test

import (
	"strings"
	"testing"

	v1alpha1 "github.com/haptic-io/haptic/api/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestValidateNamesEachBadKubernetesField(t *testing.T) {
	valid := func() v1alpha1.HAProxyTemplateConfigSpec {
		return v1alpha1.HAProxyTemplateConfigSpec{
			WatchedResources: map[string]v1alpha1.WatchedResource{
				"svc": {APIVersion: "v1", Resource: "services"},
			},
			PodSelector: v1alpha1.PodSelector{MatchLabels: map[string]string{"app": "haproxy"}},
		}
	}
	if s := valid(); s.Validate() != nil {
		t.Fatalf("valid spec: %v", s.Validate())
	}
	tests := []struct {
		name   string
		change func(*v1alpha1.HAProxyTemplateConfigSpec)
		want   string
	}{
		{"label selector", func(s *v1alpha1.HAProxyTemplateConfigSpec) {
			w := s.WatchedResources["svc"]
			w.LabelSelector = "app in (a"
			s.WatchedResources["svc"] = w
		}, `spec.watchedResources "svc": labelSelector "app in (a"`},
		{"field selector", func(s *v1alpha1.HAProxyTemplateConfigSpec) {
			w := s.WatchedResources["svc"]
			w.FieldSelector = "metadata.name"
			s.WatchedResources["svc"] = w
		}, `spec.watchedResources "svc": fieldSelector "metadata.name"`},
		{"negative debounce", func(s *v1alpha1.HAProxyTemplateConfigSpec) {
			w := s.WatchedResources["svc"]
			w.DebounceInterval = &metav1.Duration{Duration: -1}
			s.WatchedResources["svc"] = w
		}, "debounceInterval -1ns: negative"},
		{"empty pod selector", func(s *v1alpha1.HAProxyTemplateConfigSpec) {
			s.PodSelector.MatchLabels = nil
		}, "spec.podSelector: matchLabels: empty"},
		{"bad pod label", func(s *v1alpha1.HAProxyTemplateConfigSpec) {
			s.PodSelector.MatchLabels = map[string]string{"app": "not a value"}
		}, "spec.podSelector: matchLabels"},
		{"min deployment interval over the ceiling", func(s *v1alpha1.HAProxyTemplateConfigSpec) {
			s.Dataplane.MinDeploymentInterval = &metav1.Duration{Duration: 61e9}
		}, "spec.dataplane: minDeploymentInterval 1m1s: must be at most 1m0s"},
		{"zero sync timeout", func(s *v1alpha1.HAProxyTemplateConfigSpec) {
			s.Dataplane.SyncTimeout = &metav1.Duration{}
		}, "spec.dataplane: syncTimeout 0s: must be positive"},
		{"agent port", func(s *v1alpha1.HAProxyTemplateConfigSpec) {
			s.Agent.Port = 70000
		}, "spec.agent: port 70000"},
		{"token secret without name", func(s *v1alpha1.HAProxyTemplateConfigSpec) {
			s.Agent.TokenSecretRef = &v1alpha1.SecretKeyRef{}
		}, "spec.agent: tokenSecretRef: name is empty"},
		{"library listed twice", func(s *v1alpha1.HAProxyTemplateConfigSpec) {
			s.Libraries = []string{"base", "base"}
		}, `spec.libraries "base": listed twice`},
		{"template part", func(s *v1alpha1.HAProxyTemplateConfigSpec) {
			s.Files = map[string]v1alpha1.FileTemplate{"/etc/passwd": {}}
		}, `files "/etc/passwd": file name is absolute`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := valid()
			tt.change(&s)
			err := s.Validate()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Validate() = %v; want an error containing %q", err, tt.want)
			}
		})
	}
}
