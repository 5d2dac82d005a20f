package v1alpha1_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/haptic-io/haptic/agentapi"
	v1alpha1 "github.com/haptic-io/haptic/api/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestNewHAProxyCfgIsOwnedByItsConfig(t *testing.T) {
	cfg := &v1alpha1.HAProxyTemplateConfig{ObjectMeta: metav1.ObjectMeta{Name: "edge", Namespace: "haptic", UID: "1234"}}
	out := v1alpha1.NewHAProxyCfg(cfg)
	yes := true
	want := []metav1.OwnerReference{{
		APIVersion: "haproxy-haptic.org/v1alpha1", Kind: "HAProxyTemplateConfig",
		Name: "edge", UID: "1234", Controller: &yes, BlockOwnerDeletion: &yes,
	}}
	if diff := cmp.Diff(want, out.OwnerReferences); diff != "" {
		t.Errorf("owner references (-want +got):\n%s", diff)
	}
	if out.Name != "edge" || out.Namespace != "haptic" || out.Kind != "HAProxyCfg" || out.APIVersion != "haproxy-haptic.org/v1alpha1" {
		t.Errorf("NewHAProxyCfg = %s %s/%s %s; want HAProxyCfg haptic/edge", out.APIVersion, out.Namespace, out.Name, out.Kind)
	}
}

func TestSetPodsSortsAndCountsThePodsOnThePlan(t *testing.T) {
	c := &v1alpha1.HAProxyCfg{Spec: v1alpha1.HAProxyCfgSpec{PlanID: "p2"}}
	pods := []v1alpha1.PodStatus{
		{Name: "haproxy-c", AppliedPlanID: "p1", Mode: v1alpha1.ApplyReload, LastError: "reload: timeout"},
		{Name: "haproxy-a", AppliedPlanID: "p2", Mode: v1alpha1.ApplyRuntime},
		{Name: "haproxy-b", AppliedPlanID: "p2", Mode: v1alpha1.ApplyNoop},
		{Name: "haproxy-d"},
	}
	c.SetPods(pods)
	var names []string
	for _, p := range c.Status.Pods {
		names = append(names, p.Name)
	}
	if diff := cmp.Diff([]string{"haproxy-a", "haproxy-b", "haproxy-c", "haproxy-d"}, names); diff != "" {
		t.Errorf("pods order (-want +got):\n%s", diff)
	}
	if c.Status.ReadyPods != 2 || c.Status.TotalPods != 4 {
		t.Errorf("ready/total = %d/%d; want 2/4", c.Status.ReadyPods, c.Status.TotalPods)
	}
	if pods[0].Name != "haproxy-c" {
		t.Errorf("SetPods reordered its argument")
	}
}

// A pod's mode is the planner's verdict of its last apply.
func TestApplyModesAreTheVerdicts(t *testing.T) {
	got := []string{string(v1alpha1.ApplyNoop), string(v1alpha1.ApplyRuntime), string(v1alpha1.ApplyFileOnly), string(v1alpha1.ApplyReload)}
	want := []string{string(agentapi.VerdictNoop), string(agentapi.VerdictRuntime), string(agentapi.VerdictFileOnly), string(agentapi.VerdictReload)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("apply modes (-verdicts +modes):\n%s", diff)
	}
}
