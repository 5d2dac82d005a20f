package install_test

import (
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/haptic-io/haptic/agentapi"
	"github.com/haptic-io/haptic/internal/testenv/minicluster"
	"github.com/haptic-io/haptic/internal/testenv/minicluster/kubelet"
)

// Label selectors of the release's pods.
const (
	controllerPods = "app.kubernetes.io/instance=haptic,app.kubernetes.io/component=controller"
	haproxyPods    = "app.kubernetes.io/instance=haptic,app.kubernetes.io/component=haproxy"
)

// values are what the mini cluster needs on top of the chart's defaults:
// the images its kubelet maps to local binaries, a ClusterIP Service (no
// load balancer here) and short leader-election timings. rev goes into a
// pod annotation of the HAProxy pods: a new one rolls them.
func values(rev int) map[string]any {
	return map[string]any{
		"image":   map[string]any{"repository": kubelet.HAPTICImage, "tag": "e2e"},
		"haproxy": map[string]any{"image": map[string]any{"repository": kubelet.HAProxyImage, "tag": "3.4"}, "podAnnotations": map[string]any{"haptic.test/revision": strconv.Itoa(rev)}},
		"service": map[string]any{"type": "ClusterIP"},
		// The webhook reviews the config and every Ingress; the snippet
		// lets an Ingress's annotation reach haproxy.cfg as one word, so a
		// bad one is what only haproxy -c finds.
		"webhook":        map[string]any{"enabled": true, "ingresses": map[string]any{"enabled": true}},
		"operatorConfig": map[string]any{"snippets": map[string]any{"base-frontend-http-zz-deny-from": map[string]any{"template": denyFromSnippet}}},
		"controller": map[string]any{"logLevel": "debug",
			"extraArgs": []any{"--lease-duration=4s", "--renew-deadline=3s", "--retry-period=500ms"}},
	}
}

// denyFromSnippet denies the source network of each Ingress's annotation
// haptic.test/deny-from.
const denyFromSnippet = `{{- range .resources.ingresses.List }}{{ with index .metadata "annotations" }}{{ with index . "haptic.test/deny-from" }}{{ if regexMatch "^[0-9a-fA-F.:/]+$" . }}
    http-request deny if { src {{ . }} }
{{- end }}{{ end }}{{ end }}{{ end }}
`

// TestChartInstallServesUpgradesAndUninstallsClean installs the chart
// with the Helm SDK on the mini cluster, whose kubelet runs the two
// controller replicas in-cluster (service-account token, the kubernetes
// Service) and the two HAProxy pods. Through the release: an Ingress
// serves through each HAProxy pod and the Service, a second one adds no
// reload, a deleted one answers 404; the backend scales 1 → 3 → 1 with no
// failed request and no reload; the leader's process is stalled and then
// killed, the other replica takes over within the lease, traffic does not
// fail, and the killed term's apply is refused by the fence. Then `helm upgrade`
// with a new pod annotation rolls the HAProxy pods while fresh and
// keep-alive clients send requests through the Service, none failing.
// Last, `helm uninstall` leaves no object of any kind behind, the
// controller's own (HAProxyCfg, Lease) included; the CRDs stay, as Helm's
// rule is.
func TestChartInstallServesUpgradesAndUninstallsClean(t *testing.T) {
	begin := time.Now()
	e := startEnv(t)
	for _, n := range []string{ns, appNS} {
		if _, err := e.client.CoreV1().Namespaces().Create(e.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: n}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	e.deployEcho(t)
	before := e.objects(t, ns)

	rel := e.install(t, values(1))
	t.Logf("helm install: release %s revision %d, %v after start", rel.Name, rel.Version, time.Since(begin).Round(time.Millisecond))
	defer func() {
		if t.Failed() {
			e.logPods(t)
		}
	}()
	e.pods(t, ns, controllerPods, 2)
	// The agents are ready once the first plan runs: the controller,
	// in-cluster, found the pods, read the token and deployed.
	haproxy := e.pods(t, ns, haproxyPods, 2)
	t.Logf("controllers and HAProxy pods Ready %v after start", time.Since(begin).Round(time.Millisecond))
	svc, err := e.client.CoreV1().Services(ns).Get(e.ctx, "haptic-haproxy", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	svcURL := "http://" + net.JoinHostPort(svc.Spec.ClusterIP, "80") + "/"
	token := e.agentToken(t)
	agent := func(p corev1.Pod) *agentapi.Client {
		return &agentapi.Client{BaseURL: "http://" + p.Status.PodIP + ":5555", Token: token}
	}
	podURLs := func(pods []corev1.Pod) []string {
		var out []string
		for _, p := range pods {
			out = append(out, "http://"+p.Status.PodIP+":8080/")
		}
		return out
	}
	serves := func(t *testing.T, host string, status int) {
		t.Helper()
		for _, u := range append(podURLs(haproxy), svcURL) {
			waitStatus(e.ctx, t, u, host, status)
		}
	}
	workers := func() string {
		var out []string
		for _, p := range haproxy {
			st, err := agent(p).State(e.ctx)
			if err != nil {
				// A string that never matches a settled one: the caller's
				// comparison fails with the reason.
				out = append(out, fmt.Sprintf("%s:error(%v)", p.Name, err))
				continue
			}
			out = append(out, fmt.Sprintf("%s:%d", p.Name, st.Worker.PID))
		}
		return strings.Join(out, " ")
	}

	t.Run("1: an Ingress serves through every pod and the Service, a second adds no reload, a deleted one answers 404", func(t *testing.T) {
		e.createIngress(t, "a", "a.example")
		serves(t, "a.example", 200)
		t.Logf("first Ingress served %v after start", time.Since(begin).Round(time.Millisecond))
		w := e.settled(t, workers)
		e.createIngress(t, "b", "b.example")
		serves(t, "b.example", 200)
		if got := workers(); got != w {
			t.Errorf("workers %s, then %s: HAProxy reloaded", w, got)
		}
		if err := e.client.NetworkingV1().Ingresses(appNS).Delete(e.ctx, "b", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		serves(t, "b.example", 404)
	})

	t.Run("the webhook, through the release's Service, refuses a bad Ingress with HAProxy's words and a host conflict", func(t *testing.T) {
		ings := e.client.NetworkingV1().Ingresses(appNS)
		bad := ingress("bad", "bad.example")
		bad.Annotations = map[string]string{"haptic.test/deny-from": "10.0.0.0/33"}
		thief := ingress("thief", "a.example")
		thief.Spec.Rules[0].HTTP.Paths[0].Backend.Service.Name = "other"
		for _, c := range []struct {
			ing  *networkingv1.Ingress
			want []string
		}{
			{bad, []string{`admission webhook "ingresses.haproxy-haptic.org" denied the request`, "HAPTIC refuses Ingress " + appNS + "/bad",
				"HAProxy refuses the configuration", "10.0.0.0/33"}},
			{thief, []string{"HAPTIC refuses Ingress " + appNS + "/thief", "MapKeyConflict"}},
		} {
			// The chart's failurePolicy for Ingresses is Ignore: until
			// the controllers serve and their CA is in the caBundle, an
			// Ingress is admitted unchecked; dry runs until it is refused.
			var refusal string
			poll(e.ctx, t, "the webhook refuses Ingress "+c.ing.Name, func() (bool, string) {
				_, err := ings.Create(e.ctx, c.ing, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
				if err == nil {
					return false, "admitted"
				}
				refusal = err.Error()
				return strings.Contains(refusal, "denied the request"), refusal
			})
			t.Logf("refusal: %s", refusal)
			for _, w := range c.want {
				if !strings.Contains(refusal, w) {
					t.Errorf("the refusal does not say %q:\n%s", w, refusal)
				}
			}
		}
		// A good Ingress is admitted and serves.
		e.createIngress(t, "good", "good.example")
		serves(t, "good.example", 200)
	})

	t.Run("2: the backend scales 1 to 3 to 1 with no failed request and no reload", func(t *testing.T) {
		w := e.settled(t, workers)
		tr := startTraffic(e.ctx, append(podURLs(haproxy), svcURL), "a.example", 1, 0)
		for _, n := range []int32{3, 1} {
			e.scaleEcho(t, n)
		}
		time.Sleep(time.Second) // traffic after the last endpoint change
		tr.end(t, "scaling")
		if got := workers(); got != w {
			t.Errorf("workers %s, then %s: HAProxy reloaded", w, got)
		}
	})

	t.Run("5: the leader is killed, the other replica takes over, and the killed term's apply is refused", func(t *testing.T) {
		leader, term := e.leader(t)
		st, err := agent(haproxy[0]).State(e.ctx)
		if err != nil {
			t.Fatal(err)
		}
		if st.Fence != term {
			t.Fatalf("agent fence %d, Lease term %d", st.Fence, term)
		}
		tr := startTraffic(e.ctx, append(podURLs(haproxy), svcURL), "a.example", 1, 0)
		// Stalled first (SIGSTOP), then killed: a killed container comes
		// back under the same pod name at once and renews its own Lease,
		// so a takeover needs the leader gone for longer than the lease.
		pid := controllerPID(t, e.haptic, leader)
		if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		killed := time.Now()
		var next string
		poll(e.ctx, t, "another replica leads", func() (bool, string) {
			next, _ = e.leader(t)
			return next != leader, "holder " + next
		})
		t.Logf("%s took over %v after %s stalled (lease 4s)", next, time.Since(killed).Round(time.Millisecond), leader)
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		e.createIngress(t, "c", "c.example")
		serves(t, "c.example", 200)
		tr.end(t, "takeover")
		for _, p := range haproxy {
			st, err := agent(p).State(e.ctx)
			if err != nil {
				t.Fatal(err)
			}
			if st.Fence <= term {
				t.Errorf("agent of %s on fence %d, want the new term (above %d)", p.Name, st.Fence, term)
			}
			// A late apply of the killed leader's term: a revert to the
			// last-known-good plan, refused at the fence.
			_, err = agent(p).Apply(e.ctx, &agentapi.ApplyRequest{PlanID: st.LastKnownGoodPlanID, Fence: term, Mode: agentapi.ModeRevertLKG})
			var nack *agentapi.NackError
			if !errors.As(err, &nack) || nack.Stage != agentapi.StageFence {
				t.Errorf("agent of %s: the apply of term %d: %v, want a fence NACK", p.Name, term, err)
			}
		}
		e.pods(t, ns, controllerPods, 2) // the killed container is back, following
		serves(t, "a.example", 200)
	})

	t.Run("helm upgrade rolls the HAProxy pods with no failed request", func(t *testing.T) {
		tr := startTraffic(e.ctx, []string{svcURL}, "a.example", 2, 2)
		time.Sleep(time.Second)
		rel := e.upgrade(t, values(2))
		started := time.Now()
		var fresh []corev1.Pod
		lastState := ""
		poll(e.ctx, t, "the HAProxy pods rolled", func() (bool, string) {
			pl, err := e.client.CoreV1().Pods(ns).List(e.ctx, metav1.ListOptions{LabelSelector: haproxyPods})
			if err != nil {
				return false, err.Error()
			}
			fresh = fresh[:0]
			var state []string
			for _, p := range pl.Items {
				state = append(state, fmt.Sprintf("%s rev=%s ready=%v", p.Name, p.Annotations["haptic.test/revision"], podReady(p)))
				if p.Annotations["haptic.test/revision"] == "2" && podReady(p) && p.DeletionTimestamp == nil {
					fresh = append(fresh, p)
				}
			}
			if st := strings.Join(state, "; "); st != lastState {
				t.Logf("%s %s", time.Now().Format("15:04:05.000"), st)
				lastState = st
			}
			return len(pl.Items) == 2 && len(fresh) == 2, strings.Join(state, "; ")
		})
		t.Logf("helm upgrade to revision %d: rolled in %v", rel.Version, time.Since(started).Round(time.Millisecond))
		time.Sleep(time.Second) // traffic after the roll
		tr.end(t, "upgrade")
		if t.Failed() {
			e.logPods(t)
		}
		for _, p := range fresh {
			if slices.ContainsFunc(haproxy, func(o corev1.Pod) bool { return o.UID == p.UID }) {
				t.Errorf("pod %s was not replaced", p.Name)
			}
		}
		haproxy = fresh
		serves(t, "a.example", 200)
		serves(t, "c.example", 200)
	})

	t.Run("helm uninstall leaves nothing behind", func(t *testing.T) {
		created := map[objectKey]bool{}
		for k := range e.objects(t, ns) {
			if !before[k] {
				created[k] = true
			}
		}
		for _, want := range []objectKey{
			{"haproxycfgs.haproxy-haptic.org", ns, "haptic"},
			{"leases.coordination.k8s.io", ns, "haptic-haptic"},
			{"ingressclasses.networking.k8s.io", "", "haptic"},
		} {
			if !created[want] {
				t.Errorf("before the uninstall: no %s among the %d objects the release made", want, len(created))
			}
		}
		t.Logf("the release made %d objects", len(created))
		e.uninstall(t)
		var left []string
		poll(e.ctx, t, "every object of the release gone", func() (bool, string) {
			left = left[:0]
			for k := range e.objects(t, ns) {
				if created[k] {
					left = append(left, k.String())
				}
			}
			slices.Sort(left)
			return len(left) == 0, strings.Join(left, ", ")
		})
		for k := range e.objects(t, ns) {
			if !before[k] && !created[k] {
				t.Errorf("%s appeared during the uninstall", k)
			}
		}
	})
}

// deployEcho creates Deployment and Service "echo" (echo-basic, port 80
// to 3000) in the app namespace.
func (e *env) deployEcho(t testing.TB) {
	t.Helper()
	objs, err := minicluster.SplitManifests([]byte(strings.ReplaceAll(`
apiVersion: apps/v1
kind: Deployment
metadata: {name: echo, namespace: __NS__}
spec:
  replicas: 1
  selector: {matchLabels: {app: echo}}
  template:
    metadata: {labels: {app: echo}}
    spec:
      containers:
        - name: echo
          image: `+kubelet.EchoBasicImage+`:v1.6.3
          env:
            - {name: POD_NAME, valueFrom: {fieldRef: {fieldPath: metadata.name}}}
            - {name: NAMESPACE, valueFrom: {fieldRef: {fieldPath: metadata.namespace}}}
          ports: [{containerPort: 3000}]
          readinessProbe: {tcpSocket: {port: 3000}, periodSeconds: 1}
---
apiVersion: v1
kind: Service
metadata: {name: echo, namespace: __NS__}
spec:
  selector: {app: echo}
  ports: [{name: http, port: 80, targetPort: 3000}]
`, "__NS__", appNS)))
	if err != nil {
		t.Fatal(err)
	}
	if err := minicluster.Apply(e.ctx, e.RESTConfig(), objs); err != nil {
		t.Fatal(err)
	}
	e.pods(t, appNS, "app=echo", 1)
}

// scaleEcho sets the echo Deployment's replicas and waits until its
// EndpointSlices list that many ready endpoints.
func (e *env) scaleEcho(t testing.TB, n int32) {
	t.Helper()
	patch := fmt.Sprintf(`{"spec":{"replicas":%d}}`, n)
	if _, err := e.client.AppsV1().Deployments(appNS).Patch(e.ctx, "echo", types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	poll(e.ctx, t, fmt.Sprintf("%d ready endpoints of echo", n), func() (bool, string) {
		sl, err := e.client.DiscoveryV1().EndpointSlices(appNS).List(e.ctx, metav1.ListOptions{LabelSelector: "kubernetes.io/service-name=echo"})
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

// createIngress creates ingress(name, host).
func (e *env) createIngress(t testing.TB, name, host string) {
	t.Helper()
	if _, err := e.client.NetworkingV1().Ingresses(appNS).Create(e.ctx, ingress(name, host), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// ingress routes host to Service echo, class haptic.
func ingress(name, host string) *networkingv1.Ingress {
	prefix := networkingv1.PathTypePrefix
	class := "haptic"
	return &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: appNS},
		Spec: networkingv1.IngressSpec{IngressClassName: &class, Rules: []networkingv1.IngressRule{{
			Host: host,
			IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{Paths: []networkingv1.HTTPIngressPath{{
				Path: "/", PathType: &prefix,
				Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: "echo", Port: networkingv1.ServiceBackendPort{Number: 80}}},
			}}}},
		}}},
	}
}

// settled returns workers() once it stays the same over a reload pacing
// interval (a reload an agent scheduled has happened).
func (e *env) settled(t testing.TB, workers func() string) string {
	t.Helper()
	last := ""
	poll(e.ctx, t, "HAProxy workers settled", func() (bool, string) {
		now := workers()
		same := now == last
		last = now
		if !same {
			time.Sleep(2500 * time.Millisecond)
		}
		return same, now
	})
	return last
}

// leader returns the Lease's holder and term (leaderTransitions + 1, the
// fence the leader's applies carry).
func (e *env) leader(t testing.TB) (string, uint64) {
	t.Helper()
	l, err := e.client.CoordinationV1().Leases(ns).Get(e.ctx, "haptic-haptic", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	holder, transitions := "", int32(0)
	if l.Spec.HolderIdentity != nil {
		holder = *l.Spec.HolderIdentity
	}
	if l.Spec.LeaseTransitions != nil {
		transitions = *l.Spec.LeaseTransitions
	}
	return holder, uint64(transitions) + 1
}

// controllerPID finds the process of `haptic controller` running for
// pod (its POD_NAME).
func controllerPID(t testing.TB, haptic, pod string) int {
	t.Helper()
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		if exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid)); err != nil || exe != haptic {
			continue
		}
		cmd, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		env, _ := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
		if args := strings.Split(string(cmd), "\x00"); len(args) > 1 && args[1] == "controller" &&
			slices.Contains(strings.Split(string(env), "\x00"), "POD_NAME="+pod) {
			return pid
		}
	}
	t.Fatalf("no haptic controller process for pod %s", pod)
	return 0
}

// logPods logs the release's pods and their containers' logs, for a
// failure.
func (e *env) logPods(t testing.TB) {
	t.Helper()
	pl, err := e.client.CoreV1().Pods(ns).List(e.ctx, metav1.ListOptions{})
	if err != nil {
		t.Logf("list pods: %v", err)
		return
	}
	for _, p := range pl.Items {
		t.Logf("pod %s: phase %s, conditions %+v", p.Name, p.Status.Phase, p.Status.Conditions)
		for _, c := range append(append([]corev1.Container(nil), p.Spec.InitContainers...), p.Spec.Containers...) {
			b, err := e.client.CoreV1().Pods(ns).GetLogs(p.Name, &corev1.PodLogOptions{Container: c.Name}).DoRaw(e.ctx)
			if err != nil {
				t.Logf("  %s: %v", c.Name, err)
				continue
			}
			s := string(b)
			if len(s) > 6000 {
				s = "..." + s[len(s)-6000:]
			}
			t.Logf("  %s:\n%s", c.Name, s)
		}
	}
}
