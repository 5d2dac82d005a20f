package cluster

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/haptic-io/haptic/agentapi"
	"github.com/haptic-io/haptic/internal/controller"
)

func haproxyPod(name, uid, ip string, phase corev1.PodPhase, lbl map[string]string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "haptic", Name: name, UID: types.UID(uid), Labels: lbl},
		Status:     corev1.PodStatus{Phase: phase, PodIP: ip},
	}
}

func TestPodsTargetServablePodsAndForgetTheRest(t *testing.T) {
	sel := map[string]string{"app": "haproxy"}
	cs := fake.NewClientset(
		haproxyPod("b", "u-b", "198.18.0.3", corev1.PodRunning, sel),
		haproxyPod("a", "u-a", "198.18.0.2", corev1.PodRunning, sel),
		haproxyPod("pending", "u-p", "", corev1.PodPending, sel),
		haproxyPod("other", "u-o", "198.18.0.9", corev1.PodRunning, map[string]string{"app": "web"}),
	)
	changed := make(chan struct{}, 64)
	p, err := NewPods(PodsConfig{Client: cs, Namespace: "haptic", Selector: labels.SelectorFromSet(sel),
		Token: func() agentapi.Token { return "t0k" }, Changed: func() { changed <- struct{}{} }})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = p.Run(ctx) }()
	select {
	case <-p.Synced():
	case <-time.After(10 * time.Second):
		t.Fatal("pods never synced")
	}
	targets := p.Targets()
	if got := names(targets); got != "a b" {
		t.Fatalf("targets %q, want %q", got, "a b")
	}
	c := targets[0].Agent.(*agentapi.Client)
	if c.BaseURL != "http://198.18.0.2:5555" || c.Token != "t0k" {
		t.Errorf("client of a: %s %q", c.BaseURL, c.Token)
	}
	if again := p.Targets(); again[0].Agent != targets[0].Agent {
		t.Error("an unchanged pod got a new client")
	}
	if got := strings.Join(p.Addresses(), " "); got != "198.18.0.2 198.18.0.3" {
		t.Errorf("addresses %q", got)
	}

	// a is re-created under its name with a new address; b goes away.
	if err := cs.CoreV1().Pods("haptic").Delete(ctx, "b", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Pods("haptic").Update(ctx, haproxyPod("a", "u-a2", "198.18.0.7", corev1.PodRunning, sel), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.After(10 * time.Second)
	for names(p.Targets()) != "a" || p.Targets()[0].Agent.(*agentapi.Client).BaseURL != "http://198.18.0.7:5555" {
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("targets %q after the changes", names(p.Targets()))
		}
	}
	if p.Targets()[0].Agent == targets[0].Agent {
		t.Error("a re-created pod kept its old client")
	}
}

func TestNewPodsRefusesAnEmptySelector(t *testing.T) {
	if _, err := NewPods(PodsConfig{Client: fake.NewClientset(), Namespace: "x", Selector: labels.Everything()}); err == nil {
		t.Error("an empty selector was accepted: it would pick every pod")
	}
}

func names(ts []controller.Target) string {
	var s []string
	for _, t := range ts {
		s = append(s, t.Name)
	}
	return strings.Join(s, " ")
}
