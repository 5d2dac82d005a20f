package cluster

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/haptic-io/haptic/store"
)

func spec(t *testing.T, yml string) map[string]any {
	t.Helper()
	objs, err := store.DecodeManifests([]byte(yml))
	if err != nil || len(objs) != 1 {
		t.Fatalf("spec: %v", err)
	}
	return objs[0]
}

func TestParseSpecSplitsKubernetesFieldsFromTheTemplateConfig(t *testing.T) {
	s, err := ParseSpec(spec(t, `
libraries: [base, ingress]
watchedResources:
  ingresses: {apiVersion: networking.k8s.io/v1, resource: ingresses, indexBy: ["metadata.namespace", "metadata.name"], namespace: shop, labelSelector: "team=web", fieldSelector: "spec.ingressClassName=haptic"}
extraContext: {ingressClass: haptic}
podSelector: {matchLabels: {app.kubernetes.io/name: haptic-haproxy}}
agent: {port: 6000, tokenSecretRef: {name: agent-token}}
dataplane: {driftPreventionInterval: 30s, syncTimeout: 1m}
`), "haptic-system", 7)
	if err != nil {
		t.Fatal(err)
	}
	var ing Watch
	for _, w := range s.Watches {
		if w.Alias == "ingresses" {
			ing = w
		}
	}
	want := Watch{Alias: "ingresses", APIVersion: "networking.k8s.io/v1", Resource: "ingresses", Namespace: "shop", LabelSelector: "team=web", FieldSelector: "spec.ingressClassName=haptic"}
	if diff := cmp.Diff(want, ing); diff != "" {
		t.Errorf("ingresses watch (-want +got):\n%s", diff)
	}
	if len(s.Watches) < 3 {
		t.Errorf("watches %v: the libraries' services and endpoints are missing", s.Watches)
	}
	if s.Generation != 7 || s.PodNamespace != "haptic-system" || s.PodSelector.String() != "app.kubernetes.io/name=haptic-haproxy" ||
		s.AgentPort != 6000 || s.TokenSecret != "agent-token" || s.TokenKey != "token" ||
		s.DriftPreventionInterval != 30*time.Second || s.SyncTimeout != time.Minute || s.ConfigPublishInterval != 10*time.Second {
		t.Errorf("settings = %+v", s)
	}
	if got := s.Templates.ExtraContext["ingressClass"]; got != "haptic" {
		t.Errorf("extraContext.ingressClass = %v", got)
	}
	if s.Templates.HAProxyConfig == nil {
		t.Error("the libraries' haproxy.cfg template was not merged")
	}
}

func TestParseSpecRefusesWhatTheFileFormatRefuses(t *testing.T) {
	for name, tc := range map[string]struct{ yml, want string }{
		"unknown field":       {"podSelector: {matchLabels: {a: b}}\nnotAField: 1\n", "notAField"},
		"no pod selector":     {"extraContext: {}\n", "matchLabels"},
		"bad port":            {"podSelector: {matchLabels: {a: b}}\nagent: {port: 70000}\n", "port 70000"},
		"bad duration":        {"podSelector: {matchLabels: {a: b}}\ndataplane: {syncTimeout: soon}\n", "invalid duration \"soon\""},
		"unknown library":     {"podSelector: {matchLabels: {a: b}}\nlibraries: [nosuch]\n", "nosuch"},
		"non-string selector": {"podSelector: {matchLabels: {a: b}}\nwatchedResources: {x: {apiVersion: v1, resource: services, labelSelector: 3}}\n", "labelSelector"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := ParseSpec(spec(t, tc.yml), "ns", 1)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one naming %q", err, tc.want)
			}
		})
	}
}

func TestFieldFilterMatchesNestedFields(t *testing.T) {
	f, err := parseFieldFilter("spec.ingressClassName=haptic,metadata.name!=skip")
	if err != nil {
		t.Fatal(err)
	}
	obj := func(name, class string) map[string]any {
		return map[string]any{"metadata": map[string]any{"name": name}, "spec": map[string]any{"ingressClassName": class}}
	}
	for _, tc := range []struct {
		obj  map[string]any
		want bool
	}{
		{obj("a", "haptic"), true},
		{obj("a", "nginx"), false},
		{obj("skip", "haptic"), false},
		{map[string]any{"metadata": map[string]any{"name": "a"}}, false},
	} {
		if got := f.matches(tc.obj); got != tc.want {
			t.Errorf("matches(%v) = %v, want %v", tc.obj, got, tc.want)
		}
	}
	if !(fieldFilter{}).matches(obj("x", "y")) {
		t.Error("no filter refused an object")
	}
	if _, err := parseFieldFilter("a..b=c"); err == nil {
		t.Error("a bad field path parsed")
	}
}
