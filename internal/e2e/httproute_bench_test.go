package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/haptic-io/haptic/internal/testenv/minicluster"
	"github.com/haptic-io/haptic/internal/testenv/minicluster/kubelet"
)

// The HTTPRoute programs are the route benchmarks of route_bench_test.go
// in gateway mode: one GatewayClass of ours, one Gateway "bench" in the
// backends' namespace with an HTTP listener on port 80 that admits routes
// of every namespace, and the one-pod HAProxy fleet the controller makes
// for it (--gateway-replicas 1, HAProxy 3.4). Each route is an HTTPRoute
// with one hostname, no match (PathPrefix "/") and one backendRef.

// benchGateway is the Gateway the HTTPRoute programs attach to, in the
// backends' namespace.
const benchGateway = "bench"

// httpRouteKind routes with gateway.networking.k8s.io/v1 HTTPRoutes
// attached to the Gateway benchGateway.
var httpRouteKind = routeKind{
	name:  "httproute",
	start: startGatewayBench,
	create: func(ctx context.Context, cs kubernetes.Interface, ns, name, host, svc string) error {
		return gatewayAPI(ctx, cs, http.MethodPost, ns, "httproutes", "", "application/json", httpRoute(ns, name, host, svc))
	},
	setBackend: func(ctx context.Context, cs kubernetes.Interface, ns, name, host, svc string) error {
		patch := map[string]any{"spec": map[string]any{"rules": []any{map[string]any{
			"backendRefs": []any{map[string]any{"name": svc, "port": 80}},
		}}}}
		return gatewayAPI(ctx, cs, http.MethodPatch, ns, "httproutes", name, "application/merge-patch+json", patch)
	},
}

// httpRoute is HTTPRoute ns/name for host to Service svc port 80,
// attached to the Gateway benchGateway of the backends' namespace.
func httpRoute(ns, name, host, svc string) map[string]any {
	return map[string]any{
		"apiVersion": "gateway.networking.k8s.io/v1",
		"kind":       "HTTPRoute",
		"metadata":   map[string]any{"name": name, "namespace": ns},
		"spec": map[string]any{
			"parentRefs": []any{map[string]any{"name": benchGateway, "namespace": "shop"}},
			"hostnames":  []any{host},
			"rules":      []any{map[string]any{"backendRefs": []any{map[string]any{"name": svc, "port": 80}}}},
		},
	}
}

// gatewayAPI sends one request for a gateway.networking.k8s.io/v1
// resource through cs's REST client (the typed client has no such
// kinds): POST to the collection when name is empty, else to the object.
func gatewayAPI(ctx context.Context, cs kubernetes.Interface, method, ns, resource, name, contentType string, body any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	path := "/apis/gateway.networking.k8s.io/v1/namespaces/" + ns + "/" + resource
	if name != "" {
		path += "/" + name
	}
	rc := cs.CoreV1().RESTClient()
	req := rc.Post()
	if method == http.MethodPatch {
		req = rc.Patch("")
	}
	res := req.AbsPath(path).SetHeader("Content-Type", contentType).SetHeader("Accept", "application/json").Body(b).Do(ctx)
	if err := res.Error(); err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	return nil
}

// startGatewayBench is startRouteBench in gateway mode: the cluster with
// the Gateway API CRDs (experimental channel, as the conformance suite
// installs them), HAPTIC's CRDs, a HAProxyTemplateConfig of the base and
// gateway libraries, the GatewayClass, the backends, the controller and
// the Gateway; it waits for the Gateway's fleet pod and a first route
// served through it.
func startGatewayBench(b *testing.B, kind routeKind, backends ...string) *routeBench {
	b.Helper()
	c := startClusterOn(b, "3.4")
	ctx, cancel := context.WithTimeout(context.Background(), benchTimeout)
	b.Cleanup(cancel)
	e := &controllerEnv{cluster: c, ctx: ctx, ns: "haptic", app: "shop", top: b}
	c.createNamespace(ctx, b, e.ns)
	c.createNamespace(ctx, b, e.app)
	if err := minicluster.InstallGatewayCRDs(ctx, c.RESTConfig(), c.Bins.GatewayExperimentalCRDDir); err != nil {
		b.Fatal(err)
	}
	c.installCRDs(ctx, b)
	objs, err := minicluster.SplitManifests([]byte(strings.NewReplacer("__NS__", e.ns, "__TOKEN__", string(newToken(b)), "__APP__", e.app, "__GW__", benchGateway).Replace(`
apiVersion: v1
kind: Secret
metadata: {name: haptic-agent-token, namespace: __NS__}
type: Opaque
stringData: {token: __TOKEN__}
---
apiVersion: haproxy-haptic.org/v1alpha1
kind: HAProxyTemplateConfig
metadata: {name: haptic, namespace: __NS__}
spec:
  libraries: [base, gateway]
  extraContext: {httpAddress: 0.0.0.0, errorPort: 18999, statsSocket: stats.sock, hardStopAfter: 10s}
  podSelector: {matchLabels: {app.kubernetes.io/part-of: haptic}}
  agent: {port: 5555, tokenSecretRef: {name: haptic-agent-token, key: token}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: haptic}
spec:
  controllerName: haproxy-haptic.org/gateway-controller
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: __GW__, namespace: __APP__}
spec:
  gatewayClassName: haptic
  listeners:
    - {name: http, protocol: HTTP, port: 80, allowedRoutes: {namespaces: {from: All}}}
`)))
	if err != nil {
		b.Fatal(err)
	}
	if err := minicluster.Apply(ctx, c.RESTConfig(), objs); err != nil {
		b.Fatal(err)
	}
	for _, name := range backends {
		e.deployEcho(ctx, b, e.app, name)
	}
	rb := &routeBench{controllerEnv: e, b: b, kind: kind}
	extra := []string{"--leader-elect=false", "--gateway-replicas", "1", "--gateway-service-type", "ClusterIP",
		"--gateway-agent-image", kubelet.HAPTICImage + ":e2e", "--gateway-haproxy-image", haproxyImage("3.4")}
	if os.Getenv("HAPTIC_BENCH_PROFILE_DIR") != "" {
		rb.pprof = freePort(b)
		extra = append(extra, "--pprof-listen", rb.pprof)
	}
	rb.started = time.Now()
	rb.ctl = c.startController(ctx, b, e.ns, "controller-0", extra...)
	pod := rb.waitFleetPod(benchGateway)
	rb.url = "http://" + pod.Status.PodIP + "/"
	if err := kind.create(ctx, e.Client, e.app, "first", "first.example", backends[0]); err != nil {
		b.Fatal(err)
	}
	rb.waitServed("first.example", 2*time.Minute)
	rb.firstServed = time.Since(rb.started)
	rb.watchMemory()
	rb.profileCPU()
	return rb
}

// profileCPU, when HAPTIC_BENCH_PROFILE_DIR is set, saves the
// controller's CPU profile of the program's first
// HAPTIC_BENCH_CPU_PROFILE seconds (default 30) to
// <dir>/<kind>-controller-cpu.pb.gz, in the background.
func (rb *routeBench) profileCPU() {
	dir := os.Getenv("HAPTIC_BENCH_PROFILE_DIR")
	if dir == "" || rb.pprof == "" {
		return
	}
	secs := envInt("HAPTIC_BENCH_CPU_PROFILE", 30)
	path := filepath.Join(dir, rb.kind.name+"-controller-cpu.pb.gz")
	var wg sync.WaitGroup
	wg.Go(func() {
		ctx, cancel := context.WithTimeout(rb.ctx, time.Duration(secs+30)*time.Second)
		defer cancel()
		url := fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", rb.pprof, secs)
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			rb.b.Logf("CPU profile: %v", err)
			return
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err == nil && resp.StatusCode == http.StatusOK {
			err = os.WriteFile(path, body, 0o644)
		}
		if err != nil {
			rb.b.Logf("CPU profile: %s %v", resp.Status, err)
			return
		}
		rb.b.Logf("controller CPU profile: %s", path)
	})
	rb.b.Cleanup(wg.Wait)
}

// waitFleetPod waits until the fleet of Gateway gw (in the backends'
// namespace) has one pod, Ready, and returns it.
func (rb *routeBench) waitFleetPod(gw string) corev1.Pod {
	rb.b.Helper()
	var pod corev1.Pod
	ok := poll(rb.ctx, rb.b, "the fleet pod of Gateway "+gw, func() (bool, string) {
		pl, err := rb.Client.CoreV1().Pods(rb.app).List(rb.ctx, metav1.ListOptions{LabelSelector: "gateway.networking.k8s.io/gateway-name=" + gw})
		if err != nil {
			return false, err.Error()
		}
		if len(pl.Items) != 1 || !podReady(pl.Items[0]) || pl.Items[0].DeletionTimestamp != nil {
			return false, fmt.Sprintf("pods %v", podNames(pl))
		}
		pod = pl.Items[0]
		return true, ""
	})
	if !ok {
		rb.logPods(rb.ctx, rb.b, rb.app)
		rb.b.Logf("controller log:\n%s", tailString(rb.ctl.log.String(), 60))
		rb.b.FailNow()
	}
	return pod
}

// tailString is the last n lines of s.
func tailString(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// BenchmarkHTTPRoutePropagationThroughTheAPIServer is the probe program
// with HTTPRoutes: HAPTIC_BENCH_ROUTES routes (default 300) created one
// right after another through the apiserver, each polled every
// millisecond through the Gateway's HAProxy pod until its first 200,
// reported as BenchmarkIngressPropagationThroughTheAPIServer reports;
// HAPTIC_BENCH_PLOT=FILE.svg draws the latencies by route index.
//
//	HAPTIC_BENCH_ROUTES=3000 go test -run '^$' -bench HTTPRoutePropagation -benchtime 1x -timeout 60m ./internal/e2e/
func BenchmarkHTTPRoutePropagationThroughTheAPIServer(b *testing.B) {
	n := envInt("HAPTIC_BENCH_ROUTES", 300)
	for b.Loop() {
		runProbe(b, httpRouteKind, n, os.Getenv("HAPTIC_BENCH_PLOT"))
	}
}

// BenchmarkHTTPRouteRouteChange is the routechange program with
// HTTPRoutes: traffic from 4 keep-alive clients while one HTTPRoute's
// backendRef flips HAPTIC_BENCH_FLIPS times (default 20), 200 ms apart,
// between two Services; routechange_non200 must be 0.
//
//	go test -run '^$' -bench HTTPRouteRouteChange -benchtime 1x -timeout 30m ./internal/e2e/
func BenchmarkHTTPRouteRouteChange(b *testing.B) {
	flips := envInt("HAPTIC_BENCH_FLIPS", 20)
	for b.Loop() {
		runRouteChange(b, httpRouteKind, flips, 200*time.Millisecond)
	}
}

// BenchmarkHTTPRouteBackendFilter is the second half of routechange:
// under traffic from 4 keep-alive clients, a ResponseHeaderModifier is
// set on the route's backendRef (backendRefs[0].filters) with a new value
// HAPTIC_BENCH_FILTER_CHANGES times (default 5), 200 ms after the
// previous value was observed. Every value must be observed on a live
// answer; it reports the time from each patch to the first answer that
// carries it (filter_p50_ms, filter_max_ms) and every answer other than
// 200 (filter_non200, must be 0).
//
//	go test -run '^$' -bench HTTPRouteBackendFilter -benchtime 1x -timeout 30m ./internal/e2e/
func BenchmarkHTTPRouteBackendFilter(b *testing.B) {
	changes := envInt("HAPTIC_BENCH_FILTER_CHANGES", 5)
	for b.Loop() {
		runBackendFilter(b, changes)
	}
}

// backendFilterHeader is the response header the backendRef filter sets.
const backendFilterHeader = "X-Haptic-Bench"

func runBackendFilter(b *testing.B, changes int) {
	rb := startGatewayBench(b, httpRouteKind, "echo-a")
	const host = "filter.example"
	if err := httpRouteKind.create(rb.ctx, rb.Client, rb.app, "filter", host, "echo-a"); err != nil {
		b.Fatal(err)
	}
	rb.waitServed(host, 2*time.Minute)

	var requests, non200 atomic.Int64
	var seen atomic.Value // the newest value of the header answered
	seen.Store("")
	var mu sync.Mutex
	var first []string
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
			defer c.CloseIdleConnections()
			for range 1_000_000 { // bounded; stop ends it long before
				select {
				case <-stop:
					return
				default:
				}
				req, _ := http.NewRequestWithContext(rb.ctx, http.MethodGet, rb.url, nil)
				req.Host = host
				resp, err := c.Do(req)
				code := 0
				if err == nil {
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					code = resp.StatusCode
					if v := resp.Header.Get(backendFilterHeader); v != "" {
						seen.Store(v)
					}
				}
				requests.Add(1)
				if err != nil || code != http.StatusOK {
					non200.Add(1)
					mu.Lock()
					if len(first) < 5 {
						first = append(first, fmt.Sprintf("%s %d %v", time.Now().Format("15:04:05.000"), code, err))
					}
					mu.Unlock()
				}
			}
		})
	}
	var took []time.Duration
	missed := 0
	for i := range changes {
		rb.settle(200 * time.Millisecond)
		want := fmt.Sprintf("v%d", i+1)
		patch := map[string]any{"spec": map[string]any{"rules": []any{map[string]any{
			"backendRefs": []any{map[string]any{"name": "echo-a", "port": 80, "filters": []any{map[string]any{
				"type":                   "ResponseHeaderModifier",
				"responseHeaderModifier": map[string]any{"set": []any{map[string]any{"name": backendFilterHeader, "value": want}}},
			}}}},
		}}}}
		t0 := time.Now()
		if err := gatewayAPI(rb.ctx, rb.Client, http.MethodPatch, rb.app, "httproutes", "filter", "application/merge-patch+json", patch); err != nil {
			b.Fatal(err)
		}
		for seen.Load() != want && time.Since(t0) < 30*time.Second {
			time.Sleep(time.Millisecond)
		}
		if seen.Load() != want {
			missed++
			b.Logf("backendRef filter value %s not observed within 30 s (last %q)", want, seen.Load())
			continue
		}
		took = append(took, time.Since(t0))
	}
	rb.settle(200 * time.Millisecond)
	close(stop)
	wg.Wait()
	b.ReportMetric(float64(changes), "filter_changes")
	b.ReportMetric(float64(missed), "filter_missed")
	b.ReportMetric(float64(requests.Load()), "filter_requests")
	b.ReportMetric(float64(non200.Load()), "filter_non200")
	if len(took) > 0 {
		sorted := append([]time.Duration(nil), took...)
		for i := range sorted { // insertion sort: a handful of values
			for j := i; j > 0 && sorted[j] < sorted[j-1]; j-- {
				sorted[j], sorted[j-1] = sorted[j-1], sorted[j]
			}
		}
		b.ReportMetric(float64(sorted[len(sorted)/2].Microseconds())/1000, "filter_p50_ms")
		b.ReportMetric(float64(sorted[len(sorted)-1].Microseconds())/1000, "filter_max_ms")
	}
	if n := non200.Load(); n > 0 {
		b.Logf("backend filter: %d answers were not 200, first %v", n, first)
	}
	if missed > 0 {
		b.Errorf("%d of %d backendRef filter values were never observed on a live answer", missed, changes)
	}
}

// BenchmarkHTTPRouteScale is the scale program with HTTPRoutes:
// HAPTIC_BENCH_SCALE_ROUTES routes (default 5,000) over
// HAPTIC_BENCH_SCALE_NAMESPACES namespaces (default 50), each an
// HTTPRoute, its own Service and two EndpointSlices, then endpoint churn
// for HAPTIC_BENCH_CHURN (default 30s), reported as
// BenchmarkIngressRouteScale reports.
//
//	go test -run '^$' -bench HTTPRouteScale -benchtime 1x -timeout 60m ./internal/e2e/
func BenchmarkHTTPRouteScale(b *testing.B) {
	routes := envInt("HAPTIC_BENCH_SCALE_ROUTES", 5000)
	namespaces := envInt("HAPTIC_BENCH_SCALE_NAMESPACES", 50)
	churn := envDuration("HAPTIC_BENCH_CHURN", 30*time.Second)
	for b.Loop() {
		runScale(b, httpRouteKind, routes, namespaces, churn)
	}
}
