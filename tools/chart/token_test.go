package chart_test

import (
	"slices"
	"testing"

	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"sigs.k8s.io/yaml"
)

// cluster answers the chart's lookup calls from a fake dynamic client
// holding objs.
type cluster struct{ dyn dynamic.Interface }

var _ engine.ClientProvider = cluster{}

func (c cluster) GetClientFor(apiVersion, kind string) (dynamic.NamespaceableResourceInterface, bool, error) {
	if apiVersion != "v1" || kind != "Secret" {
		return c.dyn.Resource(schema.GroupVersionResource{Version: "v1", Resource: "unknown"}), true, nil
	}
	return c.dyn.Resource(schema.GroupVersionResource{Version: "v1", Resource: "secrets"}), true, nil
}

// renderTokenSecret renders the agent token Secret as an upgrade of a
// release whose cluster holds objs.
func renderTokenSecret(t *testing.T, objs ...runtime.Object) *corev1.Secret {
	t.Helper()
	c := loadChart(t)
	caps := chartutil.DefaultCapabilities.Copy()
	caps.KubeVersion = *kubeVersion
	vals, err := chartutil.ToRenderValues(c, nil, chartutil.ReleaseOptions{Name: releaseName, Namespace: namespace, IsUpgrade: true}, caps)
	if err != nil {
		t.Fatal(err)
	}
	s := runtime.NewScheme()
	if err := corev1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	out, err := engine.RenderWithClientProvider(c, vals, cluster{dynamicfake.NewSimpleDynamicClient(s, objs...)})
	if err != nil {
		t.Fatal(err)
	}
	var sec corev1.Secret
	if err := yaml.UnmarshalStrict([]byte(out["haptic/templates/agent-token-secret.yaml"]), &sec); err != nil {
		t.Fatal(err)
	}
	return &sec
}

// TestAgentTokenIsKeptAcrossUpgrades: an upgrade reads the token back
// with lookup instead of rolling a new one under running pods.
func TestAgentTokenIsKeptAcrossUpgrades(t *testing.T) {
	first := renderTokenSecret(t)
	if n := len(first.Data["token"]); n != 48 {
		t.Fatalf("first install: token of %d bytes; want 48", n)
	}
	if again := renderTokenSecret(t); slices.Equal(again.Data["token"], first.Data["token"]) {
		t.Error("two fresh installs got the same token; want a random one each")
	}
	existing := &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Name: "haptic-agent-token", Namespace: namespace},
		Data:       map[string][]byte{"token": []byte("kept-across-upgrades-0123456789")},
	}
	got := renderTokenSecret(t, existing)
	if string(got.Data["token"]) != "kept-across-upgrades-0123456789" {
		t.Errorf("upgrade: token %q; want the existing one", got.Data["token"])
	}
}

// TestExistingSecretReplacesTheGeneratedToken: with agent.existingSecret
// the chart makes no Secret and both ends use the user's.
func TestExistingSecretReplacesTheGeneratedToken(t *testing.T) {
	o := decode(t, render(t, map[string]any{"agent": map[string]any{"existingSecret": "my-token", "existingSecretKey": "bearer"}}))
	if secrets := all[*corev1.Secret](o); len(secrets) != 0 {
		t.Errorf("%d Secrets rendered; want none", len(secrets))
	}
	if ref := o.config.Spec.Agent.TokenSecretRef; ref == nil || ref.Name != "my-token" || ref.Key != "bearer" {
		t.Errorf("tokenSecretRef %+v; want my-token/bearer", ref)
	}
	d := find[*appsv1.Deployment](t, o, "haptic-haproxy")
	agent := d.Spec.Template.Spec.Containers[1]
	if !slices.Contains(agent.Args, "--token-file=/etc/haptic/token/bearer") {
		t.Errorf("agent args %q; want --token-file=/etc/haptic/token/bearer", agent.Args)
	}
	for _, v := range d.Spec.Template.Spec.Volumes {
		if v.Name == "token" && (v.Secret == nil || v.Secret.SecretName != "my-token") {
			t.Errorf("token volume %+v; want Secret my-token", v)
		}
	}
}
