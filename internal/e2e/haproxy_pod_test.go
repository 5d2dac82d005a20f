package e2e_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/haptic-io/haptic/agentapi"
	"github.com/haptic-io/haptic/deployplan"
)

// TestHAProxyPodServesBootstrap503AndItsAgentState deploys two HAProxy
// pods: each answers 503 on podIP:80 from the bootstrap config its init
// container wrote, and its agent, on podIP:5555, reports HAProxy 3.4 and
// no applied plan to a client with the token and refuses one without.
// Then a plan rendered by the stock libraries from an Ingress, its Service
// and the EndpointSlice the cluster made for an echo-basic pod goes to
// each agent, and the Ingress's host answers 200 from the echo pod through
// each HAProxy pod's IP.
func TestHAProxyPodServesBootstrap503AndItsAgentState(t *testing.T) {
	begin := time.Now()
	c := startCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	const ns = "haptic-e2e"
	d := c.deployHAProxy(ctx, t, ns, 2)
	t.Logf("%d HAProxy pods Ready %v after start", len(d.Pods), time.Since(begin))

	for _, p := range d.Pods {
		if status, body, err := get(ctx, "http://"+p.Status.PodIP+":80/", "any.test"); err != nil || status != http.StatusServiceUnavailable {
			t.Errorf("pod %s: GET :80 = %d %q (%v), want the bootstrap's 503", p.Name, status, body, err)
		}
		st, err := d.agent(p).State(ctx)
		if err != nil {
			t.Fatalf("pod %s: agent state: %v", p.Name, err)
		}
		if !strings.HasPrefix(st.HAProxyVersion, "3.4") || st.AppliedPlanID != "" || st.Worker.PID == 0 {
			t.Errorf("pod %s: agent state: HAProxy %q, worker %d, applied plan %q; want 3.4, a worker, none", p.Name, st.HAProxyVersion, st.Worker.PID, st.AppliedPlanID)
		}
		noToken := &agentapi.Client{BaseURL: "http://" + p.Status.PodIP + ":5555"}
		var se *agentapi.StatusError
		if _, err := noToken.State(ctx); !errors.Is(err, agentapi.ErrUnauthorized) || !errors.As(err, &se) || se.Code != http.StatusUnauthorized {
			t.Errorf("pod %s: state without the token: %v, want a 401", p.Name, err)
		}
	}

	echo := c.deployEcho(ctx, t, ns, "echo")
	if _, err := c.Client.NetworkingV1().Ingresses(ns).Create(ctx, echoIngress(ns, "echo.test", "echo"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	out := c.renderStock(ctx, t, ns)
	for _, p := range d.Pods {
		applied := time.Now()
		res := applyPlan(ctx, t, d.agent(p), out, 1)
		if !res.Reload.Performed || res.PlanID != out.ID() {
			t.Errorf("pod %s: apply result: plan %q, reload performed %v; want %s with a reload (the pod ran no plan)", p.Name, res.PlanID, res.Reload.Performed, out.ID())
		}
		body := waitStatus(ctx, t, "http://"+p.Status.PodIP+":80/hello", "echo.test", http.StatusOK)
		var e struct{ Path, Pod, Namespace string }
		if err := json.Unmarshal([]byte(body), &e); err != nil || e.Pod != echo.Name || e.Namespace != ns || e.Path != "/hello" {
			t.Errorf("pod %s: echo.test/hello = %q (%v), want the echo of pod %s/%s", p.Name, body, err, ns, echo.Name)
		}
		if status, _, err := get(ctx, "http://"+p.Status.PodIP+":80/", "other.test"); err != nil || status != http.StatusNotFound {
			t.Errorf("pod %s: GET other.test = %d (%v), want the stock 404", p.Name, status, err)
		}
		st, err := d.agent(p).State(ctx)
		if err != nil || st.AppliedPlanID != out.ID() {
			t.Errorf("pod %s: applied plan %q (%v), want %s", p.Name, st.AppliedPlanID, err, out.ID())
		}
		t.Logf("pod %s serves the plan %v after the apply began", p.Name, time.Since(applied))
	}
	t.Logf("test took %v", time.Since(begin))
}

// TestHAProxyPodRecreatedStartsFromBootstrap applies a plan to an HAProxy
// pod, deletes the pod and checks that the pod the Deployment makes in its
// place starts over: it answers the bootstrap's 503, and its agent reports
// no applied plan, so the controller owes it the full state.
func TestHAProxyPodRecreatedStartsFromBootstrap(t *testing.T) {
	begin := time.Now()
	c := startCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	const ns = "haptic-e2e"
	d := c.deployHAProxy(ctx, t, ns, 1)
	old := d.Pods[0]

	// The skeleton alone: every request gets the stock 404 instead of 503.
	out := c.renderStock(ctx, t, ns)
	applyPlan(ctx, t, d.agent(old), out, 1)
	waitStatus(ctx, t, "http://"+old.Status.PodIP+":80/", "any.test", http.StatusNotFound)

	if err := c.Client.CoreV1().Pods(ns).Delete(ctx, old.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	deleted := time.Now()
	d.Pods = c.waitHAProxyPods(ctx, t, ns, 1, old.UID)
	p := d.Pods[0]
	t.Logf("pod %s replaced by %s (%s) in %v", old.Name, p.Name, p.Status.PodIP, time.Since(deleted))
	if p.UID == old.UID {
		t.Fatalf("pod %s was not replaced", old.Name)
	}
	if status, body, err := get(ctx, "http://"+p.Status.PodIP+":80/", "any.test"); err != nil || status != http.StatusServiceUnavailable {
		t.Errorf("new pod %s: GET :80 = %d %q (%v), want the bootstrap's 503", p.Name, status, body, err)
	}
	st, err := d.agent(p).State(ctx)
	if err != nil {
		t.Fatalf("new pod %s: agent state: %v", p.Name, err)
	}
	if st.AppliedPlanID != "" || st.LastKnownGoodPlanID != "" || !strings.HasPrefix(st.HAProxyVersion, "3.4") {
		t.Errorf("new pod %s: applied plan %q, last known good %q, HAProxy %q; want no plan on 3.4", p.Name, st.AppliedPlanID, st.LastKnownGoodPlanID, st.HAProxyVersion)
	}
	// No plan means no baseline: the diff owes the pod the full state and a reload.
	dec := deployplan.Diff(out.Plan, deployplan.Baseline{HAProxyVersion: st.HAProxyVersion, AgentOps: st.OpKinds})
	if dec.Verdict != deployplan.VerdictReload || len(dec.Files) != len(out.Plan.Files) {
		t.Errorf("new pod %s: diff verdict %s with %d of %d files, want a full-state reload", p.Name, dec.Verdict, len(dec.Files), len(out.Plan.Files))
	}
	if _, err := d.agent(old).State(ctx); err == nil {
		t.Errorf("deleted pod %s: its agent still answers at %s", old.Name, old.Status.PodIP)
	}
	t.Logf("test took %v", time.Since(begin))
}

// echoIngress routes host, all paths, to port 80 of Service svc, for the
// ingress class the stock library serves.
func echoIngress(ns, host, svc string) *networkingv1.Ingress {
	prefix := networkingv1.PathTypePrefix
	class := "haptic"
	return &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{Name: svc, Namespace: ns},
		Spec: networkingv1.IngressSpec{
			IngressClassName: &class,
			Rules: []networkingv1.IngressRule{{
				Host: host,
				IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{
					Paths: []networkingv1.HTTPIngressPath{{
						Path: "/", PathType: &prefix,
						Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{
							Name: svc, Port: networkingv1.ServiceBackendPort{Number: 80},
						}},
					}},
				}},
			}},
		},
	}
}
