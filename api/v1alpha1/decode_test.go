package v1alpha1_test

import (
	"testing"

	v1alpha1 "github.com/haptic-io/haptic/api/v1alpha1"
)

func TestParseHAProxyTemplateConfigRefusesOtherKindsAndUnknownFields(t *testing.T) {
	for name, doc := range map[string]string{
		"other kind":        "apiVersion: haproxy-haptic.org/v1alpha1\nkind: HAProxyCfg\nspec: {podSelector: {matchLabels: {a: b}}}",
		"other version":     "apiVersion: haproxy-haptic.org/v1\nkind: HAProxyTemplateConfig\nspec: {podSelector: {matchLabels: {a: b}}}",
		"field in its case": "apiVersion: haproxy-haptic.org/v1alpha1\nkind: HAProxyTemplateConfig\nspec: {podselector: {matchLabels: {a: b}}}",
		"no pod selector":   "apiVersion: haproxy-haptic.org/v1alpha1\nkind: HAProxyTemplateConfig\nspec: {}",
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := v1alpha1.ParseHAProxyTemplateConfig([]byte(doc)); err == nil {
				t.Fatalf("ParseHAProxyTemplateConfig accepted:\n%s", doc)
			}
		})
	}
}
