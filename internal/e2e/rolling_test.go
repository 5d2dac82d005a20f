package e2e_test

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"github.com/haptic-io/haptic/internal/haproxytest"
	"github.com/haptic-io/haptic/internal/testenv/minicluster"
	"github.com/haptic-io/haptic/internal/testenv/minicluster/kubelet"
	"github.com/haptic-io/haptic/libraries"
)

// rollingSwitches lists what HAPTIC_ROLLING_WITHOUT (comma-separated)
// turns off, to measure what each part buys; the test asserts zero failed
// requests only when nothing is turned off.
//
//	prestop    the backend pods get no preStop sleep: a deleted pod is
//	           sent SIGTERM at once (echo-basic then exits at once)
//	idleclose  no "option idle-close-on-response" (base library): a
//	           worker leaving after a reload closes its idle keep-alive
//	           connections at once instead of after their next response
//	retry      no "option redispatch" nor "retry-on" (ingress library),
//	           and "retries 0": a request whose connect fails, or whose
//	           server closes without an answer, is not sent again
//	keepalive  no "timeout http-keep-alive 1s": an idle keep-alive
//	           connection waits up to "timeout http-request" (10 s) for its
//	           next request, also on a leaving worker
var rollingSwitches = []string{"prestop", "idleclose", "retry", "keepalive"}

// TestRollingRestartFailsNoRequest is the sentinel of zero failed
// requests, on HAProxy 3.0, 3.2 and 3.4: the product (controller, one
// HAProxy pod) routes roll.example to a backend Deployment, which is
// rolled twice with one replica, scaled to three and rolled twice more,
// while an Ingress with a TLS Secret comes and goes every second (each
// change adds or removes a crt-list line, which only a reload applies), and
// keep-alive clients with no retry send GETs and POSTs with a body through
// the HAProxy pod. Every failed request counts, by kind.
func TestRollingRestartFailsNoRequest(t *testing.T) {
	without := map[string]bool{}
	if v := os.Getenv("HAPTIC_ROLLING_WITHOUT"); v != "" {
		for _, s := range strings.Split(v, ",") {
			if !slices.Contains(rollingSwitches, s) {
				t.Fatalf("HAPTIC_ROLLING_WITHOUT: unknown %q (known: %v)", s, rollingSwitches)
			}
			without[s] = true
		}
	}
	for _, series := range haproxytest.AllSeries() {
		t.Run(series, func(t *testing.T) { testRollingRestart(t, series, without) })
	}
}

func testRollingRestart(t *testing.T, series string, without map[string]bool) {
	begin := time.Now()
	e := startProductOn(t, series, 1)
	e.applyRollingConfig(t, without)
	e.startController("controller-0")
	e.deployRollingBackend(t, "roll", !without["prestop"])
	e.createTLSSecret(t, "tls-a")
	e.createIngress(t, "roll", "roll.example", "roll")
	e.serveEverywhere(t, "roll.example", 200)
	pod := e.pods(t)[0]
	reloadsBefore := agentReloads(e.ctx, t, pod.Status.PodIP)
	t.Logf("HAProxy %s: product serving %v after start", series, time.Since(begin).Round(time.Millisecond))

	trafficStart := time.Now()
	client := startRawClient(pod.Status.PodIP+":80", "roll.example", 6, 5*time.Millisecond)
	idleGap := 700 * time.Millisecond
	if v, err := time.ParseDuration(os.Getenv("HAPTIC_ROLLING_IDLE")); err == nil {
		idleGap = v
	}
	idle := startRawClient(pod.Status.PodIP+":80", "roll.example", 4, idleGap)
	reloader := e.startTLSToggle(t, "tls-a", time.Second)

	rolls := 0
	for _, step := range []struct {
		replicas int32
		rolls    int
	}{{1, 2}, {3, 2}} {
		e.scaleTo(t, "roll", step.replicas)
		for range step.rolls {
			rolls++
			e.rollout(t, "roll", step.replicas, rolls)
		}
	}
	time.Sleep(time.Second) // traffic after the last roll
	toggles := reloader.end()
	client.end()
	idle.end()
	elapsed := time.Since(trafficStart)
	reloads := agentReloads(e.ctx, t, pod.Status.PodIP) - reloadsBefore

	t.Logf("HAProxy %s: %d rolls, %d TLS Ingress changes, %d reloads in %v: %s", series, rolls, toggles, reloads, elapsed.Round(time.Millisecond), client.summary())
	for _, ex := range client.examples {
		t.Logf("  %s", ex)
	}
	t.Logf("HAProxy %s: idle keep-alive clients (%v between requests): %s", series, idleGap, idle.summary())
	for _, ex := range idle.examples {
		t.Logf("  %s", ex)
	}
	if client.served == 0 || len(client.pods) < 3 {
		t.Errorf("%d requests served by %d pods: the traffic did not follow the rolls", client.served, len(client.pods))
	}
	if reloads < 3 {
		t.Errorf("%d reloads during the rolls, want at least 3", reloads)
	}
	if n := client.failed() + idle.failed(); n > 0 {
		if len(without) > 0 {
			t.Logf("%d failed requests with %v turned off (a measurement: not asserted)", n, slices.Sorted(mapKeys(without)))
		} else {
			t.Errorf("%d failed requests, want 0", n)
		}
	}
}

func mapKeys(m map[string]bool) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// applyRollingConfig replaces the config with one that binds HTTPS too
// (a TLS Ingress then changes the crt-list, which reloads), without the
// mechanisms of without (see rollingSwitches): those the stock libraries
// carry are turned off by overriding their snippets with a copy that
// lacks them.
func (e *controllerEnv) applyRollingConfig(t testing.TB, without map[string]bool) {
	t.Helper()
	extra := map[string]any{"ingressClass": "haptic", "httpAddress": "0.0.0.0", "httpPort": 80, "httpsPort": 443,
		"statsSocket": "stats.sock", "hardStopAfter": "10s", "timeoutHttpKeepAlive": "1s"}
	if without["keepalive"] {
		delete(extra, "timeoutHttpKeepAlive")
	}
	snippets := map[string]any{}
	override := func(lib, snippet string, edits ...string) {
		src := librarySnippet(t, lib, snippet)
		for i := 0; i < len(edits); i += 2 {
			if !strings.Contains(src, edits[i]) {
				t.Fatalf("library %s, snippet %s: no %q to turn off", lib, snippet, edits[i])
			}
			src = strings.ReplaceAll(src, edits[i], edits[i+1])
		}
		snippets[snippet] = map[string]any{"template": src}
	}
	if without["idleclose"] {
		// A later "no option" undoes it in the defaults section; the
		// line itself stays, as the library's validation test asks.
		override("base", "base-skeleton", "    option idle-close-on-response\n", "    option idle-close-on-response\n    no option idle-close-on-response\n")
	}
	if without["retry"] {
		override("ingress", "ingress-pass",
			`"options" (list "redispatch 1")`, `"options" (list)`,
			`"profileLines" (list "retry-on conn-failure empty-response" "http-request disable-l7-retry if !METH_GET")`, `"profileLines" (list "retries 0")`)
	}
	spec := map[string]any{
		"libraries":    []string{"base", "ingress"},
		"extraContext": extra,
		"podSelector":  map[string]any{"matchLabels": map[string]any{"app.kubernetes.io/name": "haptic-haproxy"}},
		"agent":        map[string]any{"port": 5555, "tokenSecretRef": map[string]any{"name": "haptic-agent-token", "key": "token"}},
		"dataplane":    map[string]any{"driftPreventionInterval": "2s"},
	}
	if len(snippets) > 0 {
		spec["snippets"] = snippets
	}
	doc, err := json.Marshal(map[string]any{
		"apiVersion": "haproxy-haptic.org/v1alpha1", "kind": "HAProxyTemplateConfig",
		"metadata": map[string]any{"name": "haptic", "namespace": e.ns},
		"spec":     spec,
	})
	if err != nil {
		t.Fatal(err)
	}
	objs, err := minicluster.SplitManifests(doc)
	if err != nil {
		t.Fatal(err)
	}
	if err := minicluster.Apply(e.ctx, e.RESTConfig(), objs); err != nil {
		t.Fatal(err)
	}
}

// librarySnippet returns the template of snippet name in stock library
// lib.
func librarySnippet(t testing.TB, lib, name string) string {
	t.Helper()
	src, err := libraries.Source(lib)
	if err != nil {
		t.Fatal(err)
	}
	var l struct {
		Snippets map[string]struct {
			Template string `json:"template"`
		} `json:"snippets"`
	}
	if err := yaml.Unmarshal(src, &l); err != nil {
		t.Fatalf("library %s: %v", lib, err)
	}
	s, ok := l.Snippets[name]
	if !ok {
		t.Fatalf("library %s has no snippet %s", lib, name)
	}
	return s.Template
}

// deployRollingBackend creates Deployment and Service name in the app
// namespace: echo-basic, one replica, rolled one pod at a time (surge 1,
// none unavailable). With preStop, a deleted pod keeps serving for 3 s
// (a preStop sleep) before its SIGTERM, as a pod behind a load balancer
// should: its endpoint turns "terminating" at once and leaves the
// balancers while the pod still answers.
func (e *controllerEnv) deployRollingBackend(t testing.TB, name string, preStop bool) {
	t.Helper()
	lifecycle := ""
	if preStop {
		lifecycle = `
          lifecycle: {preStop: {sleep: {seconds: 3}}}`
	}
	objs, err := minicluster.SplitManifests([]byte(strings.NewReplacer("__NAMESPACE__", e.app, "__NAME__", name, "__LIFECYCLE__", lifecycle).Replace(`
apiVersion: apps/v1
kind: Deployment
metadata: {name: __NAME__, namespace: __NAMESPACE__}
spec:
  replicas: 1
  selector: {matchLabels: {app: __NAME__}}
  strategy: {type: RollingUpdate, rollingUpdate: {maxSurge: 1, maxUnavailable: 0}}
  template:
    metadata: {labels: {app: __NAME__}}
    spec:
      terminationGracePeriodSeconds: 10
      containers:
        - name: echo
          image: ` + kubelet.EchoBasicImage + `:v1.6.3
          env:
            - {name: POD_NAME, valueFrom: {fieldRef: {fieldPath: metadata.name}}}
            - {name: NAMESPACE, valueFrom: {fieldRef: {fieldPath: metadata.namespace}}}
          ports: [{containerPort: 3000}]
          readinessProbe: {tcpSocket: {port: 3000}, periodSeconds: 1}__LIFECYCLE__
---
apiVersion: v1
kind: Service
metadata: {name: __NAME__, namespace: __NAMESPACE__}
spec:
  selector: {app: __NAME__}
  ports: [{name: http, port: 80, targetPort: 3000}]
`)))
	if err != nil {
		t.Fatal(err)
	}
	if err := minicluster.Apply(e.ctx, e.RESTConfig(), objs); err != nil {
		t.Fatal(err)
	}
	e.waitRolledOut(t, name, 1)
}

// scaleTo sets the Deployment's replicas and waits until it is rolled out.
func (e *controllerEnv) scaleTo(t testing.TB, name string, n int32) {
	t.Helper()
	patch := fmt.Sprintf(`{"spec":{"replicas":%d}}`, n)
	if _, err := e.Client.AppsV1().Deployments(e.app).Patch(e.ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitRolledOut(t, name, n)
}

// rollout restarts the Deployment as `kubectl rollout restart` does (a
// pod template annotation) and waits until every old pod is gone.
func (e *controllerEnv) rollout(t testing.TB, name string, replicas int32, n int) {
	t.Helper()
	start := time.Now()
	patch := fmt.Sprintf(`{"spec":{"template":{"metadata":{"annotations":{"haptic.test/restart":"%d"}}}}}`, n)
	if _, err := e.Client.AppsV1().Deployments(e.app).Patch(e.ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitRolledOut(t, name, replicas)
	t.Logf("roll %d (%d replicas) done in %v", n, replicas, time.Since(start).Round(time.Millisecond))
}

// waitRolledOut waits until Deployment name runs n updated, available
// pods and no other pod of it is left, terminating ones included.
func (e *controllerEnv) waitRolledOut(t testing.TB, name string, n int32) {
	t.Helper()
	if !poll(e.ctx, t, fmt.Sprintf("deployment %s rolled out to %d pods", name, n), func() (bool, string) {
		d, err := e.Client.AppsV1().Deployments(e.app).Get(e.ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		pl, err := e.Client.CoreV1().Pods(e.app).List(e.ctx, metav1.ListOptions{LabelSelector: "app=" + name})
		if err != nil {
			return false, err.Error()
		}
		st := d.Status
		done := st.ObservedGeneration >= d.Generation && st.UpdatedReplicas == n && st.AvailableReplicas == n && st.Replicas == n && len(pl.Items) == int(n)
		return done, fmt.Sprintf("updated %d, available %d, replicas %d, pods %v", st.UpdatedReplicas, st.AvailableReplicas, st.Replicas, podNames(pl))
	}) {
		t.FailNow()
	}
}

// createTLSSecret creates a kubernetes.io/tls Secret for tls.example.
func (e *controllerEnv) createTLSSecret(t testing.TB, name string) {
	t.Helper()
	crt, key := selfSigned(t, "tls.example")
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.app}, Type: corev1.SecretTypeTLS,
		Data: map[string][]byte{corev1.TLSCertKey: crt, corev1.TLSPrivateKeyKey: key}}
	if _, err := e.Client.CoreV1().Secrets(e.app).Create(e.ctx, s, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// tlsToggle creates and deletes a TLS Ingress, turn by turn, until ended.
type tlsToggle struct {
	stop    chan struct{}
	wg      sync.WaitGroup
	toggles int
}

// startTLSToggle creates and deletes the Ingress "tls" (tls.example, TLS
// from secret) every interval: each change reloads HAProxy.
func (e *controllerEnv) startTLSToggle(t testing.TB, secret string, interval time.Duration) *tlsToggle {
	tt := &tlsToggle{stop: make(chan struct{})}
	ing := echoIngress(e.app, "tls.example", "roll")
	ing.Name = "tls"
	ing.Spec.TLS = []networkingv1.IngressTLS{{Hosts: []string{"tls.example"}, SecretName: secret}}
	tt.wg.Go(func() {
		for i := 0; i < 600; i++ { // bounded: 10 min at 1 s
			select {
			case <-tt.stop:
				return
			case <-time.After(interval):
			}
			var err error
			if i%2 == 0 {
				_, err = e.Client.NetworkingV1().Ingresses(e.app).Create(e.ctx, ing, metav1.CreateOptions{})
			} else {
				err = e.Client.NetworkingV1().Ingresses(e.app).Delete(e.ctx, ing.Name, metav1.DeleteOptions{})
			}
			if err != nil && !apierrors.IsAlreadyExists(err) && !apierrors.IsNotFound(err) {
				t.Errorf("toggle the TLS Ingress: %v", err)
				return
			}
			tt.toggles++
		}
	})
	return tt
}

// end stops the toggling and returns how many changes it made.
func (tt *tlsToggle) end() int {
	close(tt.stop)
	tt.wg.Wait()
	return tt.toggles
}

// agentReloads reads haptic_agent_reloads_total{result="ok"} from the
// agent's metrics at ip:5555.
func agentReloads(ctx context.Context, t testing.TB, ip string) int {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+ip+":5555/metrics", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("agent metrics: %v", err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), `haptic_agent_reloads_total{result="ok"} `); ok {
			n, _ := strconv.ParseFloat(v, 64)
			return int(n)
		}
	}
	return 0
}

// selfSigned returns a PEM certificate and key for host.
func selfSigned(t testing.TB, host string) (crt, key []byte) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: host}, DNSNames: []string{host},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	kd, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kd})
}
