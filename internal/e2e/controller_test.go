package e2e_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/haptic-io/haptic/agentapi"
)

// controllerEnv is a cluster running the product: HAProxy pods, an echo
// backend, the CRDs, the config and `haptic controller`.
type controllerEnv struct {
	*cluster
	ctx  context.Context
	ns   string // the HAProxy pods', the config's and the controllers' namespace
	app  string // the backends' and Ingresses' namespace
	d    *haproxyDeployment
	ctls []*controllerProc
	// top is the test the environment belongs to: controllers started in
	// a subtest must outlive it.
	top testing.TB
}

func startProduct(t testing.TB, replicas int, controllers ...string) *controllerEnv {
	t.Helper()
	return startProductOn(t, "3.4", replicas, controllers...)
}

// startProductOn is startProduct with the HAProxy pods on series.
func startProductOn(t testing.TB, series string, replicas int, controllers ...string) *controllerEnv {
	t.Helper()
	return startProductWith(t, series, replicas, testDataplane, controllers...)
}

// testDataplane is the config's dataplane for the tests: drift is
// corrected within seconds, not the default minute, so that a test of it
// ends soon.
const testDataplane = "  dataplane: {driftPreventionInterval: 2s}\n"

// startProductWith is startProductOn with extraSpec (lines of the
// config's spec, "" for none: the product's defaults) in the config.
func startProductWith(t testing.TB, series string, replicas int, extraSpec string, controllers ...string) *controllerEnv {
	t.Helper()
	c := startClusterOn(t, series)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	t.Cleanup(cancel)
	e := &controllerEnv{cluster: c, ctx: ctx, ns: "haptic", app: "shop", top: t}
	c.createNamespace(ctx, t, e.app)
	e.d = c.deployHAProxy(ctx, t, e.ns, replicas)
	c.installCRDs(ctx, t)
	c.applyConfig(ctx, t, e.ns, extraSpec)
	for _, id := range controllers {
		e.ctls = append(e.ctls, e.startController(id))
	}
	return e
}

// startController starts a controller that lives as long as the test.
func (e *controllerEnv) startController(identity string) *controllerProc {
	return e.cluster.startController(e.ctx, e.top, e.ns, identity)
}

// settled returns the pods' worker PIDs once they stay the same over a
// reload pacing interval (a reload the agent scheduled has happened).
func (e *controllerEnv) settled(t testing.TB) map[string]int {
	t.Helper()
	var last map[string]int
	poll(e.ctx, t, "HAProxy workers settled", func() (bool, string) {
		now := e.workers(t)
		same := last != nil && fmt.Sprint(now) == fmt.Sprint(last)
		last = now
		if !same {
			time.Sleep(2500 * time.Millisecond)
		}
		return same, fmt.Sprint(now)
	})
	return last
}

// pods returns the HAProxy pods as they are now.
func (e *controllerEnv) pods(t testing.TB) []corev1.Pod {
	t.Helper()
	return e.waitHAProxyPods(e.ctx, t, e.ns, len(e.d.Pods))
}

// workers returns each pod's HAProxy worker PID, by pod name: a reload
// changes it.
func (e *controllerEnv) workers(t testing.TB) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, p := range e.pods(t) {
		st, err := e.d.agent(p).State(e.ctx)
		if err != nil {
			t.Fatalf("state of %s: %v", p.Name, err)
		}
		out[p.Name] = st.Worker.PID
	}
	return out
}

// serveEverywhere waits until host answers status through every HAProxy
// pod.
func (e *controllerEnv) serveEverywhere(t testing.TB, host string, status int) {
	t.Helper()
	for _, p := range e.pods(t) {
		waitStatus(e.ctx, t, "http://"+p.Status.PodIP+"/", host, status)
	}
}

// createIngress routes host to Service svc with an Ingress named name.
func (e *controllerEnv) createIngress(t testing.TB, name, host, svc string) {
	t.Helper()
	ing := echoIngress(e.app, host, svc)
	ing.Name = name
	if _, err := e.Client.NetworkingV1().Ingresses(e.app).Create(e.ctx, ing, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// probe sends requests for host to every pod until stop is closed and
// counts the answers that are not 200.
type probe struct {
	sent, failed atomic.Int64
	mu           sync.Mutex
	first        []string
	wg           sync.WaitGroup
	stop         chan struct{}
}

func (e *controllerEnv) startProbe(t testing.TB, host string) *probe {
	t.Helper()
	pr := &probe{stop: make(chan struct{})}
	for _, p := range e.pods(t) {
		url := "http://" + p.Status.PodIP + "/"
		pr.wg.Go(func() {
			for i := 0; i < 20000; i++ { // bounded: about 100 s at 5 ms
				select {
				case <-pr.stop:
					return
				case <-time.After(5 * time.Millisecond):
				}
				code, _, err := get(e.ctx, url, host)
				pr.sent.Add(1)
				if err != nil || code != 200 {
					pr.failed.Add(1)
					pr.mu.Lock()
					if len(pr.first) < 5 {
						pr.first = append(pr.first, fmt.Sprintf("%s: %d %v", url, code, err))
					}
					pr.mu.Unlock()
				}
			}
		})
	}
	return pr
}

func (pr *probe) end(t testing.TB, what string) {
	t.Helper()
	close(pr.stop)
	pr.wg.Wait()
	t.Logf("%s: %d requests, %d failed", what, pr.sent.Load(), pr.failed.Load())
	if pr.sent.Load() == 0 {
		t.Errorf("%s: no request sent", what)
	}
	if n := pr.failed.Load(); n > 0 {
		t.Errorf("%s: %d requests failed, first %v", what, n, pr.first)
	}
}

// TestControllerServesIngressesAndFollowsTheCluster is the product on a
// real apiserver: an Ingress created through the API serves through each
// HAProxy pod, backends scale with runtime ops only and no failed
// request, a broken config is refused with HAProxy's words while the old
// one serves, a re-created HAProxy pod gets the full state, and a deleted
// Ingress stops serving.
func TestControllerServesIngressesAndFollowsTheCluster(t *testing.T) {
	e := startProduct(t, 2, "controller-0")
	begin := time.Now()
	e.deployEcho(e.ctx, t, e.app, "echo")
	e.createIngress(t, "a", "a.example", "echo")
	e.serveEverywhere(t, "a.example", 200)
	t.Logf("first Ingress served %v after the controller started", time.Since(begin))
	poll(e.ctx, t, "config Ready", func() (bool, string) {
		s, r, m, og, g := e.configCondition(e.ctx, e.ns, "Ready")
		return s == "True" && og == g, fmt.Sprintf("%s %s %s (observed %d of %d)", s, r, m, og, g)
	})
	if ok, why := e.ctls[0].ready(e.ctx); !ok {
		t.Errorf("controller not ready: %s", why)
	}
	poll(e.ctx, t, "the Ingress's status lists every HAProxy pod", func() (bool, string) {
		ing, err := e.Client.NetworkingV1().Ingresses(e.app).Get(e.ctx, "a", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		var got []string
		for _, lb := range ing.Status.LoadBalancer.Ingress {
			got = append(got, lb.IP)
		}
		var want []string
		for _, p := range e.pods(t) {
			want = append(want, p.Status.PodIP)
		}
		slices.Sort(want)
		return slices.Equal(got, want), fmt.Sprintf("status %v, pods %v", got, want)
	})
	poll(e.ctx, t, "the HAProxyCfg shows every pod on the plan", func() (bool, string) {
		u, err := e.Dynamic.Resource(outputGVR).Namespace(e.ns).Get(e.ctx, "haptic", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		plan, _, _ := unstructured.NestedString(u.Object, "spec", "planID")
		ready, _, _ := unstructured.NestedInt64(u.Object, "status", "readyPods")
		return plan != "" && ready == int64(len(e.d.Pods)), fmt.Sprintf("plan %q, ready %d", plan, ready)
	})
	workers := e.settled(t)

	t.Run("a second Ingress is added without a reload", func(t *testing.T) {
		e.createIngress(t, "b", "b.example", "echo")
		e.serveEverywhere(t, "b.example", 200)
		if got := e.workers(t); fmt.Sprint(got) != fmt.Sprint(workers) {
			t.Errorf("workers %v, then %v: HAProxy reloaded", workers, got)
		}
	})

	t.Run("the backend scales 1 to 3 to 1 with runtime ops and no failed request", func(t *testing.T) {
		pr := e.startProbe(t, "a.example")
		for _, n := range []int32{3, 1} {
			scale(e.ctx, t, e, "echo", n)
		}
		time.Sleep(time.Second) // traffic after the last endpoint change
		pr.end(t, "scaling")
		if got := e.workers(t); fmt.Sprint(got) != fmt.Sprint(workers) {
			t.Errorf("workers %v, then %v: HAProxy reloaded", workers, got)
		}
	})

	t.Run("a broken config is refused with HAProxy's message and the old one serves", func(t *testing.T) {
		e.applyConfig(e.ctx, t, e.ns, `  dataplane: {driftPreventionInterval: 2s}
  haproxyConfig: {template: "global\n    no-such-directive-here\n"}
  validationTests: {must-load: {assertions: [{type: haproxy_valid}]}}
`)
		poll(e.ctx, t, "Validated=False for the broken generation", func() (bool, string) {
			s, r, m, og, g := e.configCondition(e.ctx, e.ns, "Validated")
			return s == "False" && og == g && strings.Contains(m, "no-such-directive-here"), fmt.Sprintf("%s %s %q (observed %d of %d)", s, r, m, og, g)
		})
		e.serveEverywhere(t, "a.example", 200)
		e.applyConfig(e.ctx, t, e.ns, testDataplane)
		poll(e.ctx, t, "Validated=True again", func() (bool, string) {
			s, r, m, og, g := e.configCondition(e.ctx, e.ns, "Validated")
			return s == "True" && og == g, fmt.Sprintf("%s %s %q (observed %d of %d)", s, r, m, og, g)
		})
	})

	t.Run("a re-created HAProxy pod gets the full state", func(t *testing.T) {
		old := e.pods(t)[0]
		if err := e.Client.CoreV1().Pods(e.ns).Delete(e.ctx, old.Name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		fresh := e.waitHAProxyPods(e.ctx, t, e.ns, len(e.d.Pods), old.UID)
		for _, p := range fresh {
			waitStatus(e.ctx, t, "http://"+p.Status.PodIP+"/", "a.example", 200)
			waitStatus(e.ctx, t, "http://"+p.Status.PodIP+"/", "b.example", 200)
		}
	})

	t.Run("a restarted controller keeps every route and reloads nothing", func(t *testing.T) {
		before := e.settled(t)
		pr := e.startProbe(t, "a.example")
		e.ctls[0].kill()
		e.ctls[0] = e.startController("controller-0")
		poll(e.ctx, t, "the restarted controller leads", func() (bool, string) {
			ok, why := e.ctls[0].ready(e.ctx)
			return ok && why == "leading", why
		})
		time.Sleep(3 * time.Second) // past a drift-prevention period: the new leader has dispatched
		pr.end(t, "controller restart")
		if got := e.workers(t); fmt.Sprint(got) != fmt.Sprint(before) {
			t.Errorf("workers %v, then %v: the restart reloaded HAProxy", before, got)
		}
	})

	t.Run("an Ingress the library refuses gets an Event and the rest deploys", func(t *testing.T) {
		bad := echoIngress(e.app, "bad.example", "echo")
		bad.Name = "bad"
		impl := networkingv1.PathTypeImplementationSpecific
		bad.Spec.Rules[0].HTTP.Paths[0].Path = "/" + strings.Repeat("a", 12000)
		bad.Spec.Rules[0].HTTP.Paths[0].PathType = &impl
		if _, err := e.Client.NetworkingV1().Ingresses(e.app).Create(e.ctx, bad, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		e.createIngress(t, "c", "c.example", "echo")
		e.serveEverywhere(t, "c.example", 200)
		poll(e.ctx, t, "a ValueTooLong Event on Ingress bad", func() (bool, string) {
			evs, err := e.Client.EventsV1().Events(e.app).List(e.ctx, metav1.ListOptions{})
			if err != nil {
				return false, err.Error()
			}
			var seen []string
			for _, ev := range evs.Items {
				seen = append(seen, ev.Regarding.Kind+"/"+ev.Regarding.Name+":"+ev.Reason)
				if ev.Regarding.Kind == "Ingress" && ev.Regarding.Name == "bad" && ev.Reason == "ValueTooLong" && ev.Type == corev1.EventTypeWarning {
					return true, ""
				}
			}
			return false, fmt.Sprint(seen)
		})
		e.serveEverywhere(t, "bad.example", 404)
	})

	t.Run("a deleted Ingress answers 404", func(t *testing.T) {
		if err := e.Client.NetworkingV1().Ingresses(e.app).Delete(e.ctx, "a", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		e.serveEverywhere(t, "a.example", 404)
	})
}

// scale sets the replicas of Deployment name in the app namespace and
// waits until its Service's EndpointSlices list that many ready pods.
func scale(ctx context.Context, t testing.TB, e *controllerEnv, name string, n int32) {
	t.Helper()
	patch := fmt.Sprintf(`{"spec":{"replicas":%d}}`, n)
	if _, err := e.Client.AppsV1().Deployments(e.app).Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	poll(ctx, t, fmt.Sprintf("%d ready endpoints of %s", n, name), func() (bool, string) {
		sl, err := e.Client.DiscoveryV1().EndpointSlices(e.app).List(ctx, metav1.ListOptions{LabelSelector: "kubernetes.io/service-name=" + name})
		if err != nil {
			return false, err.Error()
		}
		ready := 0
		for _, s := range sl.Items {
			for _, ep := range s.Endpoints {
				if ep.Conditions.Ready != nil && *ep.Conditions.Ready {
					ready++
				}
			}
		}
		return ready == int(n), fmt.Sprintf("%d ready", ready)
	})
}

// TestControllerLeaderElectionFencesTheDeposedLeader runs two replicas:
// the follower takes over from a paused leader within the lease, routes
// keep serving, the agents move to the new term, and the deposed leader's
// apply (its term's token) is refused.
func TestControllerLeaderElectionFencesTheDeposedLeader(t *testing.T) {
	e := startProduct(t, 1, "controller-0")
	e.deployEcho(e.ctx, t, e.app, "echo")
	e.createIngress(t, "a", "a.example", "echo")
	e.serveEverywhere(t, "a.example", 200)
	first := e.ctls[0]
	second := e.startController("controller-1")
	poll(e.ctx, t, "the second replica follows", func() (bool, string) {
		ok, why := second.ready(e.ctx)
		return ok && why == "following", why
	})
	pod := e.pods(t)[0]
	agent := e.d.agent(pod)
	st, err := agent.State(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	oldTerm := st.Fence

	pr := e.startProbe(t, "a.example")
	first.pause()
	paused := time.Now()
	poll(e.ctx, t, "the follower leads", func() (bool, string) {
		ok, why := second.ready(e.ctx)
		return ok && why == "leading", why
	})
	t.Logf("takeover %v after the leader paused", time.Since(paused))
	stale := e.renderStock(e.ctx, t, e.app)
	e.createIngress(t, "b", "b.example", "echo")
	e.serveEverywhere(t, "b.example", 200)
	poll(e.ctx, t, "the agent on the new leader's term", func() (bool, string) {
		st, err = agent.State(e.ctx)
		if err != nil {
			return false, err.Error()
		}
		return st.Fence > oldTerm, fmt.Sprintf("fence %d, old term %d", st.Fence, oldTerm)
	})
	first.resume()
	poll(e.ctx, t, "the deposed leader follows", func() (bool, string) {
		ok, why := first.ready(e.ctx)
		return ok && why == "following", why
	})
	pr.end(t, "takeover")
	// A late apply of the deposed leader: the whole, valid plan of the
	// world it saw when it paused (no b.example), sent with its term's
	// token. The agent refuses it at the fence, and both routes keep
	// serving.
	bodies := make(map[string][]byte, len(stale.Files))
	for _, f := range stale.Files {
		bodies[f.Path] = f.Body
	}
	_, err = agent.Apply(e.ctx, &agentapi.ApplyRequest{PlanID: stale.ID(), Fence: oldTerm, Mode: agentapi.ModeReload,
		Verdict: agentapi.VerdictReload, Files: stale.Plan.Files, Bodies: bodies})
	var nack *agentapi.NackError
	if !asNack(err, &nack) || nack.Stage != agentapi.StageFence {
		t.Errorf("the deposed leader's apply (term %d): %v, want a fence NACK", oldTerm, err)
	}
	if strings.Contains(first.log.String(), "older than") {
		t.Log("the deposed leader itself sent an apply after resuming, and it was fenced")
	}
	e.serveEverywhere(t, "a.example", 200)
	e.serveEverywhere(t, "b.example", 200)
}
