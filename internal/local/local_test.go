package local_test

import (
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/haptic-io/haptic/internal/haproxytest"
	"github.com/haptic-io/haptic/templating"
)

func TestRouteAddAndDeleteOn34NeedNoReload(t *testing.T) {
	a := haproxytest.StartEcho(t, "echo-a")
	e := startLocal(t, "3.4", baseOperatorConfig, map[string]string{"a.yaml": route("a", "a.example", a)})
	if code, body := e.get("a.example", "/"); code != 200 || body != "echo-a\n" {
		t.Fatalf("a.example: %d %q, want 200 from echo-a", code, body)
	}
	reloads, pid := e.reloads(), e.workerPID()

	b := haproxytest.StartEcho(t, "echo-b")
	if code, _ := e.get("b.example", "/"); code != 404 {
		t.Fatalf("b.example before its Ingress: %d, want 404", code)
	}
	e.write("b.yaml", route("b", "b.example", b))
	if body := e.waitStatus("b.example", 200); body != "echo-b\n" {
		t.Errorf("b.example answered %q, want echo-b", body)
	}
	e.waitApplied("")
	if got := e.reloads(); got != reloads {
		t.Errorf("reloads went from %v to %v for a route add", reloads, got)
	}
	if got := e.workerPID(); got != pid {
		t.Errorf("worker PID went from %d to %d for a route add", pid, got)
	}
	if n := e.metric("haptic_deploy_apply_total", "local", "runtime"); n < 1 {
		t.Errorf("haptic_deploy_apply_total{mode=runtime} = %v, want at least 1", n)
	}

	e.remove("b.yaml")
	e.waitStatus("b.example", 404)
	if code, _ := e.get("a.example", "/"); code != 200 {
		t.Errorf("a.example after b's delete: %d, want 200", code)
	}
	if got := e.reloads(); got != reloads {
		t.Errorf("reloads went from %v to %v for a route delete", reloads, got)
	}
}

func TestEndpointChangeMovesTrafficWithoutReload(t *testing.T) {
	a, b := haproxytest.StartEcho(t, "echo-a"), haproxytest.StartEcho(t, "echo-b")
	e := startLocal(t, "3.4", baseOperatorConfig, map[string]string{"r.yaml": route("r", "r.example", a)})
	if _, body := e.get("r.example", "/"); body != "echo-a\n" {
		t.Fatalf("r.example answered %q, want echo-a", body)
	}
	reloads, pid := e.reloads(), e.workerPID()

	e.write("r.yaml", route("r", "r.example", b))
	e.eventually("traffic to move to echo-b", func() bool {
		_, body := e.get("r.example", "/")
		return body == "echo-b\n"
	})
	for range 20 {
		if code, body := e.get("r.example", "/"); code != 200 || body != "echo-b\n" {
			t.Fatalf("after the move: %d %q, want 200 from echo-b only", code, body)
		}
	}
	if got := e.reloads(); got != reloads {
		t.Errorf("reloads went from %v to %v for an endpoint change", reloads, got)
	}
	if got := e.workerPID(); got != pid {
		t.Errorf("worker PID went from %d to %d for an endpoint change", pid, got)
	}
}

// brokenErrorfile is the operator config with an errorfile HAProxy cannot
// parse. The file does not need a reload when it changes, so the plan
// goes out file-only and only the gate's haproxy -c catches it.
var brokenErrorfile = strings.Replace(baseOperatorConfig, `\"HTTP/1.0 503 Service Unavailable\\r\\nContent-Length: 0\\r\\n\\r\\n\"`, `\"not an HTTP response\"`, 1)

func TestGateRefusesABrokenTemplateAndRevertsThePod(t *testing.T) {
	if brokenErrorfile == baseOperatorConfig {
		t.Fatal("the broken config is the good one: fix the replacement")
	}
	a := haproxytest.StartEcho(t, "echo-a")
	e := startLocal(t, "3.4", baseOperatorConfig, map[string]string{"a.yaml": route("a", "a.example", a)})
	e.eventually("the first plan to pass the gate", func() bool { return e.metric("haptic_gate_verdicts_total", "pass") >= 1 })
	good := e.info.Loop.Status().PlanID
	pid := e.workerPID()

	e.writeConfig(brokenErrorfile)
	e.eventually("the gate to refuse the broken plan", func() bool {
		s := e.info.Loop.Status()
		return s.Refused != "" && s.GateLatched
	})
	s := e.info.Loop.Status()
	if !strings.Contains(s.RefusedReason, "errorfile") || s.LastError == nil {
		t.Errorf("refusal: reason %q, last error %v; want HAProxy's errorfile alert, visible", s.RefusedReason, s.LastError)
	}
	e.eventually("the pod to be reverted to the good plan", func() bool {
		return e.info.Loop.Status().Pods["local"] == good
	})
	if e.metric("haptic_gate_verdicts_total", "refused") < 1 || e.metric("haptic_deploy_apply_total", "local", "revert_lkg") < 1 {
		t.Errorf("metrics: refused %v, reverts %v; want both counted",
			e.metric("haptic_gate_verdicts_total", "refused"), e.metric("haptic_deploy_apply_total", "local", "revert_lkg"))
	}
	if code, body := e.get("a.example", "/"); code != 200 || body != "echo-a\n" {
		t.Errorf("a.example after the refusal: %d %q, want 200 from echo-a", code, body)
	}
	// The revert reloaded onto the good tree: the tree on disk loads.
	if e.workerPID() == pid {
		t.Log("the revert did not need a new worker")
	}

	// Repaired: the gate passes the next plan and unlatches.
	e.writeConfig(baseOperatorConfig)
	e.eventually("the gate to unlatch", func() bool { return !e.info.Loop.Status().GateLatched })
	if code, _ := e.get("a.example", "/"); code != 200 {
		t.Errorf("a.example after the repair: %d, want 200", code)
	}
}

func TestBrokenCoreTemplateIsRefusedByHAProxyAndServingContinues(t *testing.T) {
	a := haproxytest.StartEcho(t, "echo-a")
	e := startLocal(t, "3.4", baseOperatorConfig, map[string]string{"a.yaml": route("a", "a.example", a)})
	pid := e.workerPID()
	e.writeConfig(baseOperatorConfig + `
  base-global-broken:
    template: "    this-is-not-a-directive\n"
`)
	e.eventually("the failed apply to be visible", func() bool {
		return e.metric("haptic_deploy_apply_failures_total", "local") >= 1 && e.info.Loop.Status().LastError != nil
	})
	if code, body := e.get("a.example", "/"); code != 200 || body != "echo-a\n" {
		t.Errorf("a.example after the refused reload: %d %q, want 200 from echo-a", code, body)
	}
	if got := e.workerPID(); got != pid {
		t.Errorf("worker PID went from %d to %d: the refused configuration replaced the worker", pid, got)
	}
	e.eventually("the gate to refuse it too", func() bool { return e.info.Loop.Status().GateLatched })
}

func TestRouteAddOn30ReloadsWithoutFailedRequests(t *testing.T) {
	a, b := haproxytest.StartEcho(t, "echo-a"), haproxytest.StartEcho(t, "echo-b")
	e := startLocal(t, "3.0", baseOperatorConfig, map[string]string{"a.yaml": route("a", "a.example", a)})
	reloads := e.reloads()

	var sent, failed atomic.Int64
	var firstFailure atomic.Value
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				code, body, err := haproxytest.TryGet(e.url+"/", "a.example")
				sent.Add(1)
				if err != nil || code != 200 || body != "echo-a\n" {
					failed.Add(1)
					firstFailure.CompareAndSwap(nil, strings.TrimSpace(body)+" "+errString(err))
				}
			}
		})
	}
	time.Sleep(200 * time.Millisecond) // traffic before the change
	e.write("b.yaml", route("b", "b.example", b))
	e.waitStatus("b.example", 200)
	e.eventually("the reload to be counted", func() bool { return e.reloads() > reloads })
	time.Sleep(200 * time.Millisecond) // traffic after the change
	close(stop)
	wg.Wait()
	t.Logf("%d requests during the route add on 3.0, %d failed", sent.Load(), failed.Load())
	if failed.Load() != 0 {
		t.Errorf("%d of %d requests failed during the reload (first: %v)", failed.Load(), sent.Load(), firstFailure.Load())
	}
	if sent.Load() < 10 {
		t.Errorf("only %d requests were sent during the change", sent.Load())
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// badIngress is an Ingress whose rules are not a list, as a manifest file
// can have it.
const badIngress = `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {namespace: t, name: bad, creationTimestamp: "2026-01-01T00:00:00Z"}
spec:
  ingressClassName: haptic
  rules: notalist
`

func TestABadIngressIsLeftOutAndLaterChangesDeploy(t *testing.T) {
	a := haproxytest.StartEcho(t, "echo-a")
	e := startLocal(t, "3.4", baseOperatorConfig, map[string]string{"a.yaml": route("a", "a.example", a), "bad.yaml": badIngress})
	if code, body := e.get("a.example", "/"); code != 200 || body != "echo-a\n" {
		t.Fatalf("a.example beside the bad Ingress: %d %q, want 200 from echo-a", code, body)
	}
	s := e.info.Loop.Status()
	want := templating.ObjectRef{APIVersion: "networking.k8s.io/v1", Kind: "Ingress", Namespace: "t", Name: "bad"}
	if len(s.Problems) != 1 || s.Problems[0].Ref != want || s.Problems[0].Reason != templating.ReasonRenderFailed ||
		!strings.Contains(s.Problems[0].Message, "range can't iterate over notalist") || s.LastError != nil {
		t.Errorf("status: problems %v, last error %v; want the bad Ingress's RenderFailed alone", s.Problems, s.LastError)
	}
	if n := e.metric("haptic_render_problems"); n != 1 {
		t.Errorf("haptic_render_problems = %v, want 1", n)
	}

	// A later change deploys while the bad Ingress stays bad.
	b := haproxytest.StartEcho(t, "echo-b")
	e.write("b.yaml", route("b", "b.example", b))
	if body := e.waitStatus("b.example", 200); body != "echo-b\n" {
		t.Errorf("b.example answered %q, want echo-b", body)
	}
	if p := e.info.Loop.Status().Problems; len(p) != 1 || p[0].Ref != want {
		t.Errorf("problems after b's add: %v, want the bad Ingress's", p)
	}

	// Fixed, it is served.
	c := haproxytest.StartEcho(t, "echo-c")
	e.write("bad.yaml", route("bad", "bad.example", c))
	if body := e.waitStatus("bad.example", 200); body != "echo-c\n" {
		t.Errorf("bad.example answered %q, want echo-c", body)
	}
	if p := e.info.Loop.Status().Problems; len(p) != 0 {
		t.Errorf("problems after the fix: %v, want none", p)
	}
}
