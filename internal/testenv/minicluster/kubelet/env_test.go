package kubelet

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func fieldEnv(name, path string) corev1.EnvVar {
	return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: path}}}
}

func TestResolveEnvFillsFieldRefsLiteralsAndReferences(t *testing.T) {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web-1", Namespace: "infra", UID: "u-1", Labels: map[string]string{"app": "web"}},
		Spec:       corev1.PodSpec{NodeName: "proc-node-1"},
	}
	optional := true
	c := &corev1.Container{Name: "c", Env: []corev1.EnvVar{
		fieldEnv("POD_NAME", "metadata.name"),
		fieldEnv("NAMESPACE", "metadata.namespace"),
		fieldEnv("IP", "status.podIP"),
		fieldEnv("APP", "metadata.labels['app']"),
		{Name: "GREETING", Value: "$(POD_NAME) in $(NAMESPACE) at $(IP) costs $$5, $(UNDEFINED)"},
		{Name: "CERT", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: "tls"}, Key: "tls.crt"}}},
		{Name: "MISSING", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: "cm"}, Key: "nope", Optional: &optional}}},
	}}
	lookup := func(kind, name, key string) (string, bool, error) {
		if kind == "Secret" && name == "tls" && key == "tls.crt" {
			return "PEM", true, nil
		}
		return "", false, nil
	}
	got, err := resolveEnv(pod, c, "198.18.0.2", "127.0.0.1", lookup)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"POD_NAME=web-1", "NAMESPACE=infra", "IP=198.18.0.2", "APP=web",
		"GREETING=web-1 in infra at 198.18.0.2 costs $5, $(UNDEFINED)",
		"CERT=PEM",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("env (-want +got):\n%s", d)
	}
}

func TestResolveEnvRejectsWhatItCannotHonour(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "n"}}
	none := func(string, string, string) (string, bool, error) { return "", false, nil }
	tests := map[string]struct {
		c    corev1.Container
		want string
	}{
		"unknown field path": {corev1.Container{Name: "c", Env: []corev1.EnvVar{fieldEnv("X", "spec.hostname")}}, "not supported"},
		"missing required secret key": {corev1.Container{Name: "c", Env: []corev1.EnvVar{{Name: "X", ValueFrom: &corev1.EnvVarSource{
			SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "s"}, Key: "k"}}}}}, `has no key "k"`},
		"resource field ref of no resource list": {corev1.Container{Name: "c", Env: []corev1.EnvVar{{Name: "X", ValueFrom: &corev1.EnvVarSource{
			ResourceFieldRef: &corev1.ResourceFieldSelector{Resource: "cpu"}}}}}, "not supported"},
		"envFrom": {corev1.Container{Name: "c", EnvFrom: []corev1.EnvFromSource{{}}}, "envFrom"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := resolveEnv(pod, &tc.c, "198.18.0.2", "127.0.0.1", none)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestResolveEnvReadsTheContainersOwnResources(t *testing.T) {
	c := corev1.Container{Name: "c", Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("512Mi")}},
		Env: []corev1.EnvVar{{Name: "GOMEMLIMIT", ValueFrom: &corev1.EnvVarSource{ResourceFieldRef: &corev1.ResourceFieldSelector{Resource: "limits.memory"}}}}}
	got, err := resolveEnv(&corev1.Pod{}, &c, "", "", nil)
	if err != nil || len(got) != 1 || got[0] != "GOMEMLIMIT=536870912" {
		t.Errorf("resolveEnv = %q, %v; want GOMEMLIMIT=536870912", got, err)
	}
}

func TestExpandVarsFollowsKubernetesRules(t *testing.T) {
	vars := map[string]string{"A": "x", "B": "$(A)"}
	tests := map[string]string{
		"":              "",
		"plain":         "plain",
		"$(A)":          "x",
		"$(A)$(A)":      "xx",
		"$$(A)":         "$(A)",
		"$(B)":          "$(A)",
		"$(C)":          "$(C)",
		"$(A":           "$(A",
		"cost $5":       "cost $5",
		"trailing $":    "trailing $",
		"pre-$(A)-post": "pre-x-post",
	}
	for in, want := range tests {
		if got := expandVars(in, vars); got != want {
			t.Errorf("expandVars(%q) = %q, want %q", in, got, want)
		}
	}
}

func FuzzExpandVars(f *testing.F) {
	for _, s := range []string{"$(A)", "$$", "$(", "a$(B)c", "$(A)$(", "$"} {
		f.Add(s)
	}
	vars := map[string]string{"A": "1", "B": "22"}
	f.Fuzz(func(t *testing.T, s string) {
		got := expandVars(s, vars)
		// Without '$' the input is returned unchanged; expansion never
		// invents text other than the defined values.
		if !strings.Contains(s, "$") && got != s {
			t.Fatalf("expandVars(%q) = %q, want it unchanged", s, got)
		}
		if len(got) > len(s)*2+1 {
			t.Fatalf("expandVars(%q) grew to %d bytes", s, len(got))
		}
	})
}
