package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/haptic-io/haptic/internal/controller"
	"github.com/haptic-io/haptic/internal/memwatch"
	"github.com/haptic-io/haptic/internal/propagation"
)

// The route benchmarks follow the programs of the public gateway-api-bench
// on the mini cluster, for any routeKind:
//
//   - probe: routes created one right after another through the
//     apiserver, each polled every millisecond through an HAProxy pod
//     from the moment its create returned until its first 200; any
//     answer other than 404 and 200 is an error;
//   - routechange: continuous traffic on one route while its backend
//     flips 20 times, 200 ms apart; every answer other than 200 counts;
//   - scale: many routes over many namespaces, each with its own Service
//     and two EndpointSlices, then endpoint churn: the controller's CPU
//     and memory.
//
// Each reports its numbers with b.ReportMetric, in go test's benchmark
// line, and the controller's and the agent's resident memory now and at
// the peak (VmRSS and VmHWM).

// steadyAfter is how long a program lets the controller idle (run no
// reconciliation, see [routeBench.settleIdle]) before it reads the steady
// resident set: past its status writes, the gate's check and its release
// of free memory after a quiet spell.
const steadyAfter = controller.DefaultIdleRelease + 2*time.Second

// idleLimit bounds the wait for the controller to idle.
const idleLimit = 2 * time.Minute

// benchTimeout bounds one route benchmark (the scale program at 5,000
// routes creates 20,000 objects); run with -timeout 60m.
const benchTimeout = 50 * time.Minute

// envInt reads a positive integer from the environment, else def.
func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// envDuration reads a duration from the environment, else def.
func envDuration(name string, def time.Duration) time.Duration {
	if v, err := time.ParseDuration(os.Getenv(name)); err == nil && v >= 0 {
		return v
	}
	return def
}

// routeBench is the product on a mini cluster for one route benchmark:
// one HAProxy pod, one controller, backends in e.app.
type routeBench struct {
	*controllerEnv
	b    *testing.B
	kind routeKind
	ctl  *controllerProc
	// url is the HAProxy pod's HTTP address, "http://198.18.0.5/".
	url string
	// logged counts the unexpected answers logged.
	logged atomic.Int32
	// started is when the controller started, firstServed how long after
	// that its first route served.
	started     time.Time
	firstServed time.Duration
	// pprof is the controller's pprof address when HAPTIC_BENCH_PROFILE_DIR
	// asks for profiles, else "".
	pprof string
	// mem samples the resident sets of the controller and the agent
	// from the first served route on, by name.
	mem map[string]*memwatch.Watcher
}

// startRouteBench starts the cluster, the HAProxy pod and the backends
// (echo-basic Deployments, one pod each, named by backends), then the
// controller, readies the kind and waits until a first route, "first"
// for host first.example to backends[0], serves.
func startRouteBench(b *testing.B, kind routeKind, backends ...string) *routeBench {
	b.Helper()
	if kind.start != nil {
		return kind.start(b, kind, backends...)
	}
	// The product's defaults: a benchmark measures what users get (the
	// tests' short drift interval would add a full reconciliation every
	// two seconds).
	e := startProductWith(b, "3.4", 1, "")
	ctx, cancel := context.WithTimeout(context.Background(), benchTimeout)
	b.Cleanup(cancel)
	e.ctx = ctx
	for _, name := range backends {
		e.deployEcho(ctx, b, e.app, name)
	}
	rb := &routeBench{controllerEnv: e, b: b, kind: kind}
	var extra []string
	if os.Getenv("HAPTIC_BENCH_PROFILE_DIR") != "" {
		rb.pprof = freePort(b)
		extra = append(extra, "--pprof-listen", rb.pprof)
	}
	rb.started = time.Now()
	rb.ctl = e.cluster.startController(ctx, b, e.ns, "controller-0", extra...)
	if kind.prepare != nil {
		if err := kind.prepare(ctx, e); err != nil {
			b.Fatalf("prepare %s routes: %v", kind.name, err)
		}
	}
	rb.url = "http://" + e.pods(b)[0].Status.PodIP + "/"
	// The pod answers 503 until the first plan lands: every program
	// starts once a first route serves.
	if err := kind.create(ctx, e.Client, e.app, "first", "first.example", backends[0]); err != nil {
		b.Fatal(err)
	}
	rb.waitServed("first.example", 2*time.Minute)
	rb.firstServed = time.Since(rb.started)
	rb.watchMemory()
	return rb
}

// watchMemory starts sampling the resident sets of the controller and
// the agent (see reportMemory).
func (rb *routeBench) watchMemory() {
	ctl, agent := rb.processes()
	rb.mem = map[string]*memwatch.Watcher{}
	for name, pid := range map[string]int{"controller": ctl, "agent": agent} {
		w := memwatch.Start(memwatch.Config{PID: pid, Interval: 20 * time.Millisecond})
		rb.mem[name] = w
		rb.b.Cleanup(func() { _, _ = w.Stop() })
	}
}

// waitServed polls host every millisecond until it answers 200, for at
// most limit, and returns how long that took and the answers that were
// neither 404 nor 200 (transport errors included).
func (rb *routeBench) waitServed(host string, limit time.Duration) (time.Duration, int) {
	t0 := time.Now()
	errs := 0
	for {
		code, _, err := get(rb.ctx, rb.url, host)
		if err == nil && code == http.StatusOK {
			return time.Since(t0), errs
		}
		if err != nil || code != http.StatusNotFound {
			if errs == 0 && rb.logged.Add(1) <= 5 {
				rb.b.Logf("route %s: %d %v after %v", host, code, err, time.Since(t0))
			}
			errs++
		}
		if time.Since(t0) > limit {
			rb.b.Fatalf("route %s not served after %v (last %d %v)", host, limit, code, err)
		}
		time.Sleep(time.Millisecond)
	}
}

// processes are the controller's and the agent's process IDs.
func (rb *routeBench) processes() (controller int, agent int) {
	pids := agentPIDs(rb.Haptic)
	if len(pids) != 1 {
		rb.b.Fatalf("want one agent process, found %v", pids)
	}
	return rb.ctl.cmd.Process.Pid, pids[0]
}

// reportMemory reports the resident set now (after the run went quiet,
// name_rss_MiB; its anonymous part, the process's own memory, as
// name_anon_MiB) and at its peak (name_peak_rss_MiB: the higher of VmHWM
// and every resident set sampled every 20 ms) of the controller and the
// agent.
func (rb *routeBench) reportMemory() {
	for name, w := range rb.mem {
		r, err := w.Now()
		if err != nil {
			rb.b.Fatalf("%s memory: %v", name, err)
		}
		rb.b.ReportMetric(float64(r.RSS)/(1<<20), name+"_rss_MiB")
		rb.b.ReportMetric(float64(r.Anon)/(1<<20), name+"_anon_MiB")
		rb.b.ReportMetric(float64(r.Peak)/(1<<20), name+"_peak_rss_MiB")
	}
}

// settle waits d for the controller's background work (status writes,
// the gate's check, collections) to end before a steady reading.
func (rb *routeBench) settle(d time.Duration) {
	select {
	case <-rb.ctx.Done():
		rb.b.Fatal(rb.ctx.Err())
	case <-time.After(d):
	}
}

// settleIdle waits until the controller ran no reconciliation for
// steadyAfter, at most idleLimit. A fixed wait from the last route served
// races the loops' release of free memory, which comes 10 s after their
// own last reconciliation: reconciliations that go on after the last
// route serves (status echoes, endpoint updates) would put the reading
// before the release in one run and after it in the next.
func (rb *routeBench) settleIdle() {
	rb.b.Helper()
	last, since := -1.0, time.Now()
	for deadline := time.Now().Add(idleLimit); time.Now().Before(deadline); rb.settle(200 * time.Millisecond) {
		n, err := rb.reconciliations()
		if err != nil {
			rb.b.Fatalf("controller metrics: %v", err)
		}
		if n != last {
			last, since = n, time.Now()
		}
		if time.Since(since) >= steadyAfter {
			return
		}
	}
	rb.b.Logf("the controller still reconciled %v after the last route: steady reading taken anyway", idleLimit)
}

// reconciliations is haptic_reconciliation_total summed over the
// controller's loops (one per Gateway in gateway mode).
func (rb *routeBench) reconciliations() (float64, error) {
	code, body, err := get(rb.ctx, "http://"+rb.ctl.listen+"/metrics", "")
	if err != nil {
		return 0, err
	}
	if code != http.StatusOK {
		return 0, fmt.Errorf("GET /metrics: %d", code)
	}
	return sumMetric(body, "haptic_reconciliation_total")
}

// controllerCPU is the controller's CPU time so far.
func (rb *routeBench) controllerCPU() time.Duration {
	d, err := procCPU(rb.ctl.cmd.Process.Pid)
	if err != nil {
		rb.b.Fatalf("controller CPU: %v", err)
	}
	return d
}

// watchPeakHeap, when HAPTIC_BENCH_PROFILE_DIR is set, samples the
// controller's resident set every 200 ms and saves its heap profile
// (/debug/pprof/heap: the objects live at its last collection) whenever
// the resident set reaches a new high, to <dir>/<name>-controller-heap-peak.pb.gz;
// stop ends it and may be called more than once.
func (rb *routeBench) watchPeakHeap(name string) (stop func()) {
	dir := os.Getenv("HAPTIC_BENCH_PROFILE_DIR")
	if dir == "" || rb.pprof == "" {
		return func() {}
	}
	path := filepath.Join(dir, name+"-controller-heap-peak.pb.gz")
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		var high int64
		for {
			select {
			case <-done:
				return
			case <-time.After(200 * time.Millisecond):
			}
			r, err := memwatch.Read(rb.ctl.cmd.Process.Pid)
			if err != nil || float64(r.RSS) < 1.05*float64(high) {
				continue
			}
			high = r.RSS
			if err := fetchTo(rb.ctx, "http://"+rb.pprof+"/debug/pprof/heap", path); err != nil {
				rb.b.Logf("heap profile at %d MiB: %v", r.RSS>>20, err)
				continue
			}
			rb.b.Logf("heap profile at controller RSS %d MiB: %s", r.RSS>>20, path)
		}
	})
	var once sync.Once
	return func() { once.Do(func() { close(done); wg.Wait() }) }
}

// steadyHeap, when HAPTIC_BENCH_PROFILE_DIR is set, saves the
// controller's runtime.MemStats as they are (where its resident set
// goes: heap in use, idle and released, stacks, runtime metadata) to
// <dir>/<name>-controller-memstats-steady.txt, then its heap profile
// after a forced collection (what it holds live, no garbage) to
// <dir>/<name>-controller-heap-steady.pb.gz. Call it after the steady
// resident set was read: the collection may return memory.
func (rb *routeBench) steadyHeap(name string) {
	dir := os.Getenv("HAPTIC_BENCH_PROFILE_DIR")
	if dir == "" || rb.pprof == "" {
		return
	}
	stats := filepath.Join(dir, name+"-controller-memstats-steady.txt")
	if err := fetchTo(rb.ctx, "http://"+rb.pprof+"/debug/pprof/heap?debug=1", stats); err != nil {
		rb.b.Logf("steady memstats: %v", err)
	}
	path := filepath.Join(dir, name+"-controller-heap-steady.pb.gz")
	if err := fetchTo(rb.ctx, "http://"+rb.pprof+"/debug/pprof/heap?gc=1", path); err != nil {
		rb.b.Logf("steady heap profile: %v", err)
	}
}

// fetchTo saves the body of GET url into path.
func fetchTo(ctx context.Context, url, path string) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

// BenchmarkIngressPropagationThroughTheAPIServer is the probe program
// with Ingresses: HAPTIC_BENCH_INGRESSES routes (default 300) created one
// right after another through the apiserver, each polled every
// millisecond through the HAProxy pod until its first 200. It reports
// p50/p90/p99/max of "create returned → first 200", the errors (answers
// neither 404 nor 200), the time from the controller's start to its first
// served route, the controller's CPU during the probe, and the memory of
// the controller and the agent. HAPTIC_BENCH_PLOT=FILE.svg draws the
// latencies by route index.
//
//	go test -run '^$' -bench IngressPropagation -benchtime 1x -timeout 60m ./internal/e2e/
func BenchmarkIngressPropagationThroughTheAPIServer(b *testing.B) {
	n := envInt("HAPTIC_BENCH_INGRESSES", 300)
	for b.Loop() {
		runProbe(b, ingressKind, n, os.Getenv("HAPTIC_BENCH_PLOT"))
	}
}

func runProbe(b *testing.B, kind routeKind, n int, plot string) {
	rb := startRouteBench(b, kind, "echo")
	stop := rb.watchPeakHeap("probe")
	cpu0 := rb.controllerCPU()
	lat := make([]time.Duration, 0, n)
	errs := 0
	for i := range n {
		host := fmt.Sprintf("r%d.example", i)
		if err := kind.create(rb.ctx, rb.Client, rb.app, fmt.Sprintf("r%d", i), host, "echo"); err != nil {
			b.Fatal(err)
		}
		d, e := rb.waitServed(host, 30*time.Second)
		lat = append(lat, d)
		errs += e
	}
	cpu := rb.controllerCPU() - cpu0
	rb.settleIdle()
	stop()
	res := propagation.ProbeResult{Latencies: slices.Sorted(slices.Values(lat)), InOrder: lat}
	for _, q := range []struct {
		name string
		q    float64
	}{{"p50_ms", 0.5}, {"p90_ms", 0.9}, {"p99_ms", 0.99}, {"max_ms", 1}} {
		b.ReportMetric(float64(res.Quantile(q.q).Microseconds())/1000, q.name)
	}
	b.ReportMetric(float64(errs), "errors")
	b.ReportMetric(float64(n), "routes")
	b.ReportMetric(float64(rb.firstServed.Milliseconds()), "first_served_ms")
	b.ReportMetric(cpu.Seconds(), "controller_cpu_s")
	rb.reportMemory()
	b.Logf("route add through the apiserver, for comparison: this run p50 %.2f ms, p99 %.2f ms; "+
		"reference implementation ≈ 1 s tuned; HAProxy Unified Gateway ≈ 5 s; agentgateway 10–30 ms; Istio 120–300 ms; "+
		"target p50 ≤ 15 ms, p99 ≤ 40 ms at 3,000 routes",
		float64(res.Quantile(0.5).Microseconds())/1000, float64(res.Quantile(0.99).Microseconds())/1000)
	if plot != "" {
		f, err := os.Create(plot)
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		if err := propagation.WriteSVG(f, propagation.Plot{
			Title: fmt.Sprintf("Route add → first 200 through the apiserver (%s, mini cluster)", kind.name),
			Subtitle: fmt.Sprintf("haptic controller + 1 HAProxy 3.4 pod · created back to back · %d routes · p50 %.2f ms, p99 %.2f ms · %s",
				n, float64(res.Quantile(0.5).Microseconds())/1000, float64(res.Quantile(0.99).Microseconds())/1000, time.Now().UTC().Format("2006-01-02")),
			Latencies: lat,
			YLabel:    "create returned → first 200 (ms)",
		}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkIngressRouteChange is the routechange program with
// Ingresses: traffic on one route from 4 keep-alive clients while the
// route's backend flips HAPTIC_BENCH_FLIPS times (default 20), 200 ms
// apart, between two Services. It reports the requests and every answer
// other than 200 (routechange_non200, must be 0).
//
//	go test -run '^$' -bench IngressRouteChange -benchtime 1x ./internal/e2e/
func BenchmarkIngressRouteChange(b *testing.B) {
	flips := envInt("HAPTIC_BENCH_FLIPS", 20)
	for b.Loop() {
		runRouteChange(b, ingressKind, flips, 200*time.Millisecond)
	}
}

// echoPod is the pod name an echo-basic answer names.
func echoPod(body string) string {
	var v struct {
		Pod string `json:"pod"`
	}
	_ = json.Unmarshal([]byte(body), &v)
	return v.Pod
}

func runRouteChange(b *testing.B, kind routeKind, flips int, interval time.Duration) {
	rb := startRouteBench(b, kind, "echo-a", "echo-b")
	const host = "flip.example"
	if err := kind.create(rb.ctx, rb.Client, rb.app, "flip", host, "echo-a"); err != nil {
		b.Fatal(err)
	}
	rb.waitServed(host, 2*time.Minute)
	podOf := map[string]string{} // Service → its pod's name
	for _, svc := range []string{"echo-a", "echo-b"} {
		pl, err := rb.Client.CoreV1().Pods(rb.app).List(rb.ctx, metav1.ListOptions{LabelSelector: "app=" + svc})
		if err != nil || len(pl.Items) != 1 {
			b.Fatalf("pod of %s: %v %v", svc, podNames(pl), err)
		}
		podOf[svc] = pl.Items[0].Name
	}

	var requests, non200 atomic.Int64
	var mu sync.Mutex
	served := map[string]int{} // by pod
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
				code, body := 0, ""
				if err == nil {
					bb, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					code, body = resp.StatusCode, string(bb)
				}
				requests.Add(1)
				mu.Lock()
				if err != nil || code != http.StatusOK {
					non200.Add(1)
					if len(first) < 5 {
						first = append(first, fmt.Sprintf("%s %d %v", time.Now().Format("15:04:05.000"), code, err))
					}
				} else {
					served[echoPod(body)]++
				}
				mu.Unlock()
			}
		})
	}
	svcs := []string{"echo-a", "echo-b"}
	for i := range flips {
		rb.settle(interval)
		if err := kind.setBackend(rb.ctx, rb.Client, rb.app, "flip", host, svcs[(i+1)%2]); err != nil {
			b.Fatal(err)
		}
	}
	// The last flip must be served, then one more interval of traffic.
	final := podOf[svcs[flips%2]]
	mu.Lock()
	before := served[final]
	mu.Unlock()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(time.Millisecond) {
		mu.Lock()
		n := served[final]
		mu.Unlock()
		if n > before || flips%2 == 0 && n > 0 {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("the last flip (to %s) was not served within 30 s", final)
		}
	}
	rb.settle(interval)
	close(stop)
	wg.Wait()
	b.ReportMetric(float64(flips), "routechange_flips")
	b.ReportMetric(float64(requests.Load()), "routechange_requests")
	b.ReportMetric(float64(non200.Load()), "routechange_non200")
	if n := non200.Load(); n > 0 {
		b.Logf("routechange: %d answers were not 200, first %v", n, first)
	}
	rb.reportMemory()
}

// BenchmarkIngressRouteScale is the scale program with Ingresses:
// HAPTIC_BENCH_SCALE_ROUTES routes (default 5,000) over
// HAPTIC_BENCH_SCALE_NAMESPACES namespaces (default 50), each an Ingress,
// its own Service and two EndpointSlices (one endpoint each, on two
// echo pods), created by 8 clients at once; then endpoint churn for
// HAPTIC_BENCH_CHURN (default 30s): every 100 ms one route's second
// endpoint turns not ready or ready again. It reports the time until
// every route served, the controller's CPU while they were created and
// during the churn (in % of one core), and the memory of the controller
// and the agent: settled (steadyAfter) after the routes, after the
// churn, and the peak.
//
//	go test -run '^$' -bench IngressRouteScale -benchtime 1x -timeout 60m ./internal/e2e/
func BenchmarkIngressRouteScale(b *testing.B) {
	routes := envInt("HAPTIC_BENCH_SCALE_ROUTES", 5000)
	namespaces := envInt("HAPTIC_BENCH_SCALE_NAMESPACES", 50)
	churn := envDuration("HAPTIC_BENCH_CHURN", 30*time.Second)
	for b.Loop() {
		runScale(b, ingressKind, routes, namespaces, churn)
	}
}

// scaleRoute is one route of the scale program.
type scaleRoute struct{ ns, name, host string }

func runScale(b *testing.B, kind routeKind, routes, namespaces int, churn time.Duration) {
	rb := startRouteBench(b, kind, "echo-a", "echo-b")
	var pods []corev1.Pod
	for _, svc := range []string{"echo-a", "echo-b"} {
		pl, err := rb.Client.CoreV1().Pods(rb.app).List(rb.ctx, metav1.ListOptions{LabelSelector: "app=" + svc})
		if err != nil || len(pl.Items) != 1 {
			b.Fatalf("pod of %s: %v %v", svc, podNames(pl), err)
		}
		pods = append(pods, pl.Items[0])
	}
	for i := range namespaces {
		rb.createNamespace(rb.ctx, b, fmt.Sprintf("scale-%02d", i))
	}
	all := make([]scaleRoute, routes)
	for i := range all {
		ns := fmt.Sprintf("scale-%02d", i%namespaces)
		name := fmt.Sprintf("app-%d", i)
		all[i] = scaleRoute{ns: ns, name: name, host: name + "." + ns + ".example"}
	}
	stop := rb.watchPeakHeap("scale")
	defer stop()
	cpu0 := rb.controllerCPU()
	t0 := time.Now()
	work := make(chan scaleRoute)
	errc := make(chan error, 8)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for r := range work {
				if err := rb.createScaleRoute(r, pods); err != nil {
					errc <- fmt.Errorf("route %s/%s: %w", r.ns, r.name, err)
					return
				}
			}
		})
	}
	for _, r := range all {
		select {
		case work <- r:
		case err := <-errc:
			b.Fatal(err)
		}
	}
	close(work)
	wg.Wait()
	select {
	case err := <-errc:
		b.Fatal(err)
	default:
	}
	created := time.Since(t0)
	errs := 0
	for _, r := range all {
		_, e := rb.waitServed(r.host, 5*time.Minute)
		errs += e
	}
	servedAll := time.Since(t0)
	setupCPU := rb.controllerCPU() - cpu0
	rb.settleIdle()
	steady := map[string]memwatch.Resident{}
	for name, w := range rb.mem {
		r, err := w.Now()
		if err != nil {
			b.Fatal(err)
		}
		steady[name] = r.Resident
	}
	rb.steadyHeap("scale")

	// Churn: one EndpointSlice update every 100 ms.
	cpu1 := rb.controllerCPU()
	c0 := time.Now()
	updates := 0
	for k := 0; time.Since(c0) < churn; k++ {
		r := all[(k*7919)%len(all)]
		if err := rb.toggleEndpoint(r); err != nil {
			b.Fatal(err)
		}
		updates++
		rb.settle(time.Until(c0.Add(time.Duration(k+1) * 100 * time.Millisecond)))
	}
	churnWall := time.Since(c0)
	churnCPU := rb.controllerCPU() - cpu1
	// Every route still serves (its first endpoint never left).
	for _, r := range all[:min(len(all), 200)] {
		_, e := rb.waitServed(r.host, 30*time.Second)
		errs += e
	}
	rb.settleIdle()
	stop()

	b.ReportMetric(float64(routes), "scale_routes")
	b.ReportMetric(float64(namespaces), "scale_namespaces")
	b.ReportMetric(created.Seconds(), "created_s")
	b.ReportMetric(servedAll.Seconds(), "all_served_s")
	b.ReportMetric(float64(errs), "errors")
	b.ReportMetric(setupCPU.Seconds(), "controller_cpu_setup_s")
	b.ReportMetric(float64(updates), "churn_updates")
	if churnWall > 0 {
		b.ReportMetric(100*churnCPU.Seconds()/churnWall.Seconds(), "controller_cpu_churn_pct")
	}
	for _, name := range []string{"controller", "agent"} {
		b.ReportMetric(float64(steady[name].RSS)/(1<<20), name+"_steady_rss_MiB")
		b.ReportMetric(float64(steady[name].Anon)/(1<<20), name+"_steady_anon_MiB")
	}
	rb.reportMemory()
}

// createScaleRoute creates route r: a Service without a selector, port
// http 80 → 3000, two EndpointSlices with one endpoint each (the two
// echo pods), and the route itself.
func (rb *routeBench) createScaleRoute(r scaleRoute, pods []corev1.Pod) error {
	ctx := rb.ctx
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: r.name, Namespace: r.ns},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(3000)}}},
	}
	if _, err := rb.Client.CoreV1().Services(r.ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		return err
	}
	for i, p := range pods {
		if _, err := rb.Client.DiscoveryV1().EndpointSlices(r.ns).Create(ctx, scaleSlice(r, i, p, true), metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	return rb.kind.create(ctx, rb.Client, r.ns, r.name, r.host, r.name)
}

// scaleSlice is EndpointSlice i ("<route>-a", "<route>-b") of route r,
// with pod p as its one endpoint.
func scaleSlice(r scaleRoute, i int, p corev1.Pod, ready bool) *discoveryv1.EndpointSlice {
	name, port, proto := "http", int32(3000), corev1.ProtocolTCP
	return &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{
			Name: fmt.Sprintf("%s-%c", r.name, 'a'+i), Namespace: r.ns,
			Labels: map[string]string{discoveryv1.LabelServiceName: r.name, discoveryv1.LabelManagedBy: "haptic-bench"},
		},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Name: &name, Port: &port, Protocol: &proto}},
		Endpoints: []discoveryv1.Endpoint{{
			Addresses:  []string{p.Status.PodIP},
			Conditions: discoveryv1.EndpointConditions{Ready: &ready, Serving: &ready},
			TargetRef:  &corev1.ObjectReference{Kind: "Pod", Namespace: p.Namespace, Name: p.Name},
		}},
	}
}

// toggleEndpoint turns route r's second endpoint not ready (ready and
// serving false), or ready again.
func (rb *routeBench) toggleEndpoint(r scaleRoute) error {
	s, err := rb.Client.DiscoveryV1().EndpointSlices(r.ns).Get(rb.ctx, r.name+"-b", metav1.GetOptions{})
	if err != nil {
		return err
	}
	was := s.Endpoints[0].Conditions.Ready
	ready := was != nil && !*was
	s.Endpoints[0].Conditions.Ready, s.Endpoints[0].Conditions.Serving = &ready, &ready
	_, err = rb.Client.DiscoveryV1().EndpointSlices(r.ns).Update(rb.ctx, s, metav1.UpdateOptions{})
	return err
}
