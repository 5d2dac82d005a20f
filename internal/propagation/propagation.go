package propagation

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/haptic-io/haptic/internal/controller"
	"github.com/haptic-io/haptic/internal/echo"
	"github.com/haptic-io/haptic/internal/local"
	"github.com/haptic-io/haptic/internal/memwatch"
	"github.com/haptic-io/haptic/libraries"
	"github.com/haptic-io/haptic/templating"
)

// Config configures [Run].
type Config struct {
	// HAProxy is the haproxy binary. Required.
	HAProxy string
	// Routes is how many routes the probe creates, one at a time; zero
	// skips the probe.
	Routes int
	// Flips is how many times the route-change scenario flips one route's
	// backend; zero skips it.
	Flips int
	// FlipInterval is the pause between two flips; zero means 200 ms.
	FlipInterval time.Duration
	// Pace is how the probe spaces its route adds; empty means
	// [PaceBackToBack].
	Pace Pace
	// Storm is how many routes the storm scenario writes within about
	// 100 ms, after the other scenarios; zero skips it.
	Storm int
	// Debounce is local mode's opt-in holdoff
	// ([controller.DebounceConfig].Interval); zero holds no change.
	Debounce time.Duration
	// MinReloadInterval is the agent's reload pacing (see [local.Config]);
	// negative means none.
	MinReloadInterval time.Duration
	// ProbeCommand, when set, returns the argv of a probe client
	// ([RunProbeClient], `haptic benchmark probe-client --url URL`) that
	// polls url (local mode's HTTP address, known only once it runs) from
	// a process of its own; the probe starts it once and feeds it the
	// hosts. Nil polls from a goroutine of this process, whose 1 ms timers
	// fire late while local mode keeps the CPUs busy. The routechange
	// scenario always runs in process.
	ProbeCommand func(url string) []string
	// EchoCommand, when set, returns the argv of a process serving echo
	// servers on listen ([RunEchoServers], `haptic benchmark echo-servers
	// --listen ADDR …`), the two backends of the routes; it runs for the
	// whole benchmark. Nil serves them from this process, where local
	// mode's busy goroutines delay their answers (a real backend runs
	// elsewhere).
	EchoCommand func(listen []string) []string
	// Preload is how many routes exist before the probe starts (written
	// as one file, applied, then the probe adds Routes more): the probe
	// then measures adds at Preload..Preload+Routes routes.
	Preload int
	// CPUProfile, when set, receives a CPU profile of this process taken
	// while the probe runs.
	CPUProfile io.Writer
	// HeapProfile, when set, receives a heap profile of this process
	// (pprof's "allocs": live objects, and allocations since the process
	// started) written when the probe ends.
	HeapProfile io.Writer
	// SteadyWait is how long the loop idles after the probe before the
	// steady memory is read ([Result].Memory); zero means 12 s, past the
	// release of free memory 10 s into a quiet spell
	// ([controller.DefaultIdleRelease]).
	SteadyWait time.Duration
	// PeakHeapProfile, when set, receives a heap profile of this process
	// written when its live heap was highest (see
	// [memwatch.Config].PeakProfile).
	PeakHeapProfile io.Writer
	// Progress receives a dot per route; nil discards.
	Progress io.Writer
	// Local carries local mode's other settings (Log, HAProxyOutput,
	// WorkDir); the benchmark sets the resources, addresses, libraries,
	// debounce, pacing and registry itself.
	Local local.Config
}

// Pace is how the probe spaces its route adds.
type Pace string

// The paces of the probe.
const (
	// PaceBackToBack writes each route right after the previous route's
	// first 200, with no pause: the public gateway-api-bench probe's
	// pattern. Each change then comes right after the reconciliation of
	// the one before.
	PaceBackToBack Pace = "back-to-back"
	// PaceIsolated waits Debounce plus 5 ms after each route's first 200
	// before the next write, so that every change finds the loop idle and
	// past any holdoff.
	PaceIsolated Pace = "isolated"
)

// Answer is one HTTP answer (or transport error) that a scenario did not
// expect.
type Answer struct {
	At     time.Time
	Host   string
	Status int    // 0 for a transport error
	Detail string // the error or the body's start
}

// ProbeResult is the route-add probe: for each route, the time from the
// write of its manifest to the first 200.
type ProbeResult struct {
	Routes int
	// Pace is how the routes were spaced.
	Pace Pace
	// Preloaded is how many routes existed before the first add.
	Preloaded int
	// Poller is where the probe polled from: [InChildProcess] or
	// [InThisProcess].
	Poller string
	// Latencies are sorted, one per route.
	Latencies []time.Duration
	// InOrder are the latencies in the order the routes were written.
	InOrder []time.Duration
	// Unexpected are answers that were neither 404 (not routed yet) nor
	// 200; transport errors included. Must be empty.
	Unexpected []Answer
	// Requests is how many probe requests were sent.
	Requests int
	// Reloads is how many HAProxy reloads the agent performed during the
	// probe; 0 on 3.4 for plain routes.
	Reloads int
	// HeapAllocated is how many bytes this process (controller and agent)
	// allocated during the probe, and GCCycles how many collections ran,
	// forced ones included (the idle collections of
	// controller.Config.IdleGC).
	HeapAllocated, GCCycles uint64
}

// Quantile returns the q-quantile (0..1) of the latencies, nearest rank.
func (r ProbeResult) Quantile(q float64) time.Duration {
	if len(r.Latencies) == 0 {
		return 0
	}
	i := int(q*float64(len(r.Latencies))+0.5) - 1
	i = max(0, min(i, len(r.Latencies)-1))
	return r.Latencies[i]
}

// MediansByTenth returns the median latency of each tenth of the routes,
// in the order they were written: how a route add's latency grows with
// the routes that exist. Nil for fewer than 10 routes.
func (r ProbeResult) MediansByTenth() []time.Duration {
	n := len(r.InOrder)
	if n < 10 {
		return nil
	}
	out := make([]time.Duration, 10)
	for i := range out {
		part := slices.Clone(r.InOrder[i*n/10 : (i+1)*n/10])
		slices.Sort(part)
		out[i] = part[(len(part)-1)/2]
	}
	return out
}

// Where the probe polled from (see [Config.ProbeCommand]) and
// where the echo servers ran (see [Config.EchoCommand]).
const (
	InChildProcess = "process"
	InThisProcess  = "goroutine"
)

// RouteChangeResult is the route-change scenario: continuous traffic to
// one route while its backend flips.
type RouteChangeResult struct {
	Flips    int
	Requests int
	// NonOK are the answers other than 200. Must be empty.
	NonOK []Answer
	// Served counts the answers per echo backend.
	Served map[string]int
	// Reloads during the scenario.
	Reloads int
}

// Result is what [Run] measured.
type Result struct {
	HAProxyVersion string
	// WorkDir is where HAProxy's tree and the agent's state lived.
	WorkDir  string
	Debounce time.Duration
	// CheckSpacing is local mode's spacing of background checks.
	CheckSpacing time.Duration
	// Echo is where the echo servers ran: [InChildProcess] or
	// [InThisProcess] (in this process).
	Echo        string
	Probe       *ProbeResult
	RouteChange *RouteChangeResult
	Storm       *StormResult
	// Memory is this process's memory (local mode: the controller loop
	// and the agent) with the preloaded and probed routes in place.
	Memory *MemoryResult
}

// MemoryResult is the memory of the benchmark's process, which runs local
// mode (the controller loop and the agent; the poller and the echo
// servers run elsewhere unless in process), in bytes.
type MemoryResult struct {
	// Routes is how many routes existed when Steady was read (besides
	// the warm-up route).
	Routes int
	// Steady is the resident set once the probe's routes were applied
	// and the loop had been idle for [Config].SteadyWait; SteadyAnon its
	// anonymous part (the process's own memory, without the pages of
	// the executable).
	Steady, SteadyAnon int64
	// Peak is the highest resident set of the process up to the end of
	// the run (VmHWM).
	Peak int64
	// HeapLive is the live heap after a collection forced right after
	// Steady was read.
	HeapLive uint64
	// HeapLivePeak is the highest live heap a collection measured during
	// the run, HeapObjectsPeak the highest heap occupied by objects (live
	// or garbage), MappedPeak the most memory the runtime held.
	HeapLivePeak, HeapObjectsPeak, MappedPeak uint64
}

// Run starts local mode on real HAProxy with the stock
// libraries and two echo servers, then runs the probe, the route-change
// scenario and the storm against it, and stops everything.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	if cfg.HAProxy == "" {
		return nil, errors.New("propagation: HAProxy is required")
	}
	if cfg.Routes < 0 || cfg.Flips < 0 || cfg.Preload < 0 || cfg.Storm < 0 {
		return nil, errors.New("propagation: Routes, Flips, Preload and Storm must not be negative")
	}
	switch cfg.Pace {
	case "":
		cfg.Pace = PaceBackToBack
	case PaceBackToBack, PaceIsolated:
	default:
		return nil, fmt.Errorf("propagation: unknown Pace %q (want %q or %q)", cfg.Pace, PaceBackToBack, PaceIsolated)
	}
	if cfg.FlipInterval == 0 {
		cfg.FlipInterval = 200 * time.Millisecond
	}
	if cfg.Progress == nil {
		cfg.Progress = io.Discard
	}
	if cfg.SteadyWait <= 0 {
		cfg.SteadyWait = defaultSteadyWait
	}
	mw := memwatch.Start(memwatch.Config{PeakProfile: cfg.PeakHeapProfile})
	defer func() { _, _ = mw.Stop() }() // on an early return; Stop is idempotent
	dir, err := os.MkdirTemp("", "haptic-propagation-")
	if err != nil {
		return nil, err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	resources := filepath.Join(dir, "resources")
	if err := os.MkdirAll(resources, 0o755); err != nil {
		return nil, err
	}
	echoListen := []string{"127.0.0.1:0", "127.0.0.1:0"}
	var echoAddrs []string
	echoWhere := InThisProcess
	if cfg.EchoCommand != nil {
		c, addrs, err := startEchoProcess(ctx, cfg.EchoCommand(echoListen), len(echoListen))
		if err != nil {
			return nil, err
		}
		defer func() { _ = c.close() }()
		echoAddrs, echoWhere = addrs, InChildProcess
	} else {
		echoes, err := echo.Start(echoListen)
		if err != nil {
			return nil, err
		}
		defer echoes.Close()
		echoAddrs = echoes.Addrs()
	}
	// Two Services, one per echo server, for the routes to point at.
	for i, addr := range echoAddrs {
		if err := writeFileAtomic(filepath.Join(resources, fmt.Sprintf("svc-%d.yaml", i)), []byte(benchService(fmt.Sprintf("echo-%d", i), addr))); err != nil {
			return nil, err
		}
	}
	listen, err := freeAddr()
	if err != nil {
		return nil, err
	}
	stats, err := freeAddr()
	if err != nil {
		return nil, err
	}

	lc := cfg.Local
	lc.LoadConfig = func() (*templating.Config, error) {
		cfgs, err := libraries.Load("base", "ingress")
		if err != nil {
			return nil, err
		}
		return templating.Merge(cfgs[0], cfgs[1:]...), nil
	}
	lc.Resources, lc.HAProxy, lc.Listen, lc.StatsListen = resources, cfg.HAProxy, listen, stats
	lc.Debounce, lc.MinReloadInterval = cfg.Debounce, cfg.MinReloadInterval
	lc.Registry = prometheus.NewRegistry()
	ready := make(chan local.Info, 1)
	lc.Ready = func(i local.Info) { ready <- i }

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	runErr := make(chan error, 1)
	go func() { runErr <- local.Run(ctx, lc) }()
	defer func() {
		cancel()
		if err := <-runErr; err != nil && lc.Log != nil {
			lc.Log.Warn("local mode stopped with an error", "error", err)
		}
	}()
	var info local.Info
	select {
	case info = <-ready:
	case err := <-runErr:
		runErr <- err
		return nil, err
	}
	b := &bench{cfg: cfg, resources: resources, url: "http://" + info.HTTPAddr, info: info, reg: lc.Registry, echoes: echoAddrs}
	// The first plan (the two Services, no route) must be applied.
	if err := b.waitApplied(ctx, 30*time.Second); err != nil {
		return nil, err
	}
	res := &Result{HAProxyVersion: info.HAProxyVersion, Debounce: cfg.Debounce, CheckSpacing: lc.CheckSpacing, WorkDir: lc.WorkDir, Echo: echoWhere}
	if res.WorkDir == "" {
		res.WorkDir = "(temporary, under " + local.TempRoot() + ")"
	}
	// Warm up: the first backend brings its profile (a defaults section),
	// which only a reload can add. Every later route of the same shape is
	// runtime-only.
	if err := writeFileAtomic(filepath.Join(resources, "warm.yaml"), []byte(benchRoute("warm", "warm.bench.local", echoAddrs[0]))); err != nil {
		return nil, err
	}
	if err := b.waitFor200(ctx, "warm.bench.local"); err != nil {
		return nil, err
	}
	if err := b.waitApplied(ctx, 30*time.Second); err != nil {
		return nil, err
	}
	if cfg.Preload > 0 {
		if err := b.preload(ctx); err != nil {
			return res, err
		}
	}
	time.Sleep(cfg.Debounce + 5*time.Millisecond)
	if cfg.Routes > 0 {
		if res.Probe, err = b.probe(ctx); err != nil {
			return res, err
		}
	}
	if res.Memory, err = b.steadyMemory(ctx, mw); err != nil {
		return res, err
	}
	if cfg.Flips > 0 {
		if res.RouteChange, err = b.routeChange(ctx); err != nil {
			return res, err
		}
	}
	if cfg.Storm > 0 {
		if res.Storm, err = b.storm(ctx); err != nil {
			return res, err
		}
	}
	rep, err := mw.Stop()
	if err != nil {
		return res, err
	}
	res.Memory.Peak = rep.Peak
	res.Memory.HeapLivePeak, res.Memory.HeapObjectsPeak, res.Memory.MappedPeak = rep.HeapLive, rep.HeapObjects, rep.Mapped
	return res, nil
}

// defaultSteadyWait is [Config].SteadyWait's default: past the
// background haproxy -c that follows the last change and the release of
// free memory after a quiet spell.
const defaultSteadyWait = controller.DefaultIdleRelease + 2*time.Second

// steadyMemory reads the resident set once every route is applied and the
// loop idled for SteadyWait, then forces a collection to read the live
// heap.
func (b *bench) steadyMemory(ctx context.Context, mw *memwatch.Watcher) (*MemoryResult, error) {
	if err := b.waitApplied(ctx, time.Minute); err != nil {
		return nil, err
	}
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-time.After(b.cfg.SteadyWait):
	}
	rep, err := mw.Now()
	if err != nil {
		return nil, err
	}
	runtime.GC()
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	return &MemoryResult{Routes: b.cfg.Preload + b.cfg.Routes, Steady: rep.RSS, SteadyAnon: rep.Anon, HeapLive: s[0].Value.Uint64()}, nil
}

type bench struct {
	cfg       Config
	resources string
	url       string
	info      local.Info
	reg       *prometheus.Registry
	echoes    []string
}

// waitApplied waits until the pod runs the last rendered plan.
func (b *bench) waitApplied(ctx context.Context, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		s := b.info.Loop.Status()
		if s.PlanID != "" && s.Pods[local.PodName] == s.PlanID {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("propagation: the first plan was not applied within %v (last error: %w)", limit, s.LastError)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// reloads is the controller's count of reloads the agent performed.
func (b *bench) reloads() int {
	mfs, _ := b.reg.Gather()
	for _, mf := range mfs {
		if mf.GetName() == "haptic_haproxy_reloads_total" {
			n := 0.0
			for _, m := range mf.GetMetric() {
				n += m.GetCounter().GetValue()
			}
			return int(n)
		}
	}
	return 0
}

// preload writes cfg.Preload routes in one file and waits until they
// serve.
func (b *bench) preload(ctx context.Context) error {
	var all strings.Builder
	for i := range b.cfg.Preload {
		if i > 0 {
			all.WriteString("---\n")
		}
		all.WriteString(benchRoute(fmt.Sprintf("p%d", i), fmt.Sprintf("p%d.bench.local", i), b.echoes[i%2]))
	}
	if err := writeFileAtomic(filepath.Join(b.resources, "preload.yaml"), []byte(all.String())); err != nil {
		return err
	}
	if err := b.waitFor200(ctx, fmt.Sprintf("p%d.bench.local", b.cfg.Preload-1)); err != nil {
		return err
	}
	return b.waitApplied(ctx, 5*time.Minute)
}

// newPoller starts the poller of a scenario and says where it polls
// from.
func (b *bench) newPoller(ctx context.Context) (poller, string, error) {
	if b.cfg.ProbeCommand == nil {
		return newGoroutinePoller(b.url), InThisProcess, nil
	}
	p, err := startProcessPoller(ctx, b.cfg.ProbeCommand(b.url))
	if err != nil {
		return nil, "", err
	}
	return p, InChildProcess, nil
}

// probe creates the routes one at a time and times each to its first 200.
func (b *bench) probe(ctx context.Context) (res *ProbeResult, err error) {
	res = &ProbeResult{Routes: b.cfg.Routes, Preloaded: b.cfg.Preload, Pace: b.cfg.Pace}
	p, where, err := b.newPoller(ctx)
	if err != nil {
		return nil, err
	}
	res.Poller = where
	defer func() {
		if cerr := p.close(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	var gap time.Duration // back to back
	if b.cfg.Pace == PaceIsolated {
		gap = b.cfg.Debounce + 5*time.Millisecond
	}
	reloads := b.reloads()
	if b.cfg.CPUProfile != nil {
		if err := pprof.StartCPUProfile(b.cfg.CPUProfile); err != nil {
			return res, err
		}
		defer pprof.StopCPUProfile()
	}
	heapBefore := readHeapCounters()
	for i := range b.cfg.Routes {
		host := fmt.Sprintf("r%d.bench.local", i)
		manifest := benchRoute(fmt.Sprintf("r%d", i), host, b.echoes[i%2])
		// Poll from before the write until the first 200.
		if err := p.start(ctx, host); err != nil {
			return res, err
		}
		// A process poller's times are wall-clock readings of the same
		// machine clock; Sub then compares wall clocks.
		wrote := time.Now()
		if err := writeFileAtomic(filepath.Join(b.resources, fmt.Sprintf("route-%05d.yaml", i)), []byte(manifest)); err != nil {
			return res, err
		}
		o, err := p.wait(ctx)
		if err != nil {
			return res, err
		}
		res.Requests += o.Requests
		res.Unexpected = append(res.Unexpected, o.Unexpected...)
		if o.TimedOut {
			return res, fmt.Errorf("route %s: no 200 within %v", host, pollLimit)
		}
		res.Latencies = append(res.Latencies, o.At.Sub(wrote))
		res.InOrder = append(res.InOrder, o.At.Sub(wrote))
		if (i+1)%50 == 0 {
			fmt.Fprintf(b.cfg.Progress, "%d ", i+1)
		}
		// Isolated: the next route must find the loop idle and past the
		// holdoff, which counts from the start of the last
		// reconciliation, before the 200.
		if gap > 0 {
			time.Sleep(gap)
		}
	}
	fmt.Fprintln(b.cfg.Progress)
	slices.Sort(res.Latencies)
	res.Reloads = b.reloads() - reloads
	heapAfter := readHeapCounters()
	res.HeapAllocated, res.GCCycles = heapAfter.allocated-heapBefore.allocated, heapAfter.cycles-heapBefore.cycles
	if b.cfg.HeapProfile != nil {
		if err := pprof.Lookup("allocs").WriteTo(b.cfg.HeapProfile, 0); err != nil {
			return res, fmt.Errorf("heap profile: %w", err)
		}
	}
	return res, nil
}

// heapCounters are the runtime's cumulative heap counters.
type heapCounters struct{ allocated, cycles uint64 }

func readHeapCounters() heapCounters {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}, {Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(s)
	return heapCounters{allocated: s[0].Value.Uint64(), cycles: s[1].Value.Uint64()}
}

// routeChange keeps traffic on one route while its backend flips between
// the two echo Services.
func (b *bench) routeChange(ctx context.Context) (*RouteChangeResult, error) {
	res := &RouteChangeResult{Flips: b.cfg.Flips, Served: map[string]int{}}
	const host = "flip.bench.local"
	file := filepath.Join(b.resources, "flip.yaml")
	if err := writeFileAtomic(file, []byte(benchIngress("flip", host, "echo-0"))); err != nil {
		return nil, err
	}
	if err := b.waitFor200(ctx, host); err != nil {
		return nil, err
	}
	time.Sleep(b.cfg.Debounce + 5*time.Millisecond)
	reloads := b.reloads()

	var mu sync.Mutex
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			c := benchClient()
			defer c.CloseIdleConnections()
			for {
				select {
				case <-stop:
					return
				default:
				}
				code, body, err := get(ctx, c, b.url, host)
				mu.Lock()
				res.Requests++
				switch {
				case err != nil:
					res.NonOK = append(res.NonOK, Answer{At: time.Now(), Host: host, Detail: err.Error()})
				case code != http.StatusOK:
					res.NonOK = append(res.NonOK, Answer{At: time.Now(), Host: host, Status: code, Detail: clip(body)})
				default:
					if f := strings.Fields(body); len(f) > 1 {
						res.Served[f[1]]++
					}
				}
				mu.Unlock()
			}
		})
	}
	var err error
	last := 0 // answers of the last flip's backend when it was written
	for i := range b.cfg.Flips {
		time.Sleep(b.cfg.FlipInterval)
		mu.Lock()
		last = res.Served[b.echoes[(i+1)%2]]
		mu.Unlock()
		if err = writeFileAtomic(file, []byte(benchIngress("flip", host, fmt.Sprintf("echo-%d", (i+1)%2)))); err != nil {
			break
		}
	}
	// Flips that come faster than reconciliations complete are coalesced,
	// so one may never serve on its own: the traffic goes on until the
	// route answers from its last backend, then one more interval.
	final := b.echoes[b.cfg.Flips%2]
	for deadline := time.Now().Add(30 * time.Second); err == nil; time.Sleep(time.Millisecond) {
		mu.Lock()
		n := res.Served[final]
		mu.Unlock()
		if n > last {
			break
		}
		if time.Now().After(deadline) {
			err = fmt.Errorf("routechange: %s served no answer within 30s of the last flip", final)
		}
	}
	time.Sleep(b.cfg.FlipInterval)
	close(stop)
	wg.Wait()
	res.Reloads = b.reloads() - reloads
	return res, err
}

// waitFor200 polls host until it answers 200, for at most 30 s.
func (b *bench) waitFor200(ctx context.Context, host string) error {
	client := benchClient()
	defer client.CloseIdleConnections()
	deadline := time.Now().Add(30 * time.Second)
	for {
		code, _, err := get(ctx, client, b.url, host)
		if err == nil && code == http.StatusOK {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("route %s: no 200 within 30s (last: %d, %w)", host, code, err)
		}
		time.Sleep(time.Millisecond)
	}
}

// benchClient keeps connections alive, as a real client would.
func benchClient() *http.Client {
	return &http.Client{
		Timeout:   5 * time.Second,
		Transport: &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 4, DisableCompression: true},
	}
}

func get(ctx context.Context, c *http.Client, url, host string) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+"/", nil)
	if err != nil {
		return 0, "", err
	}
	req.Host = host
	resp, err := c.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4096))
	return resp.StatusCode, string(body), err
}

func clip(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}

// writeFileAtomic writes through a hidden temporary file and a rename, so
// the directory source sees the whole file in one event.
func writeFileAtomic(path string, b []byte) error {
	tmp := hiddenTemp(path)
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// hiddenTemp is the hidden temporary file that writeFileAtomic renames to
// path.
func hiddenTemp(path string) string {
	return filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp")
}

// freeAddr returns a free 127.0.0.1 address.
func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer func() { _ = l.Close() }()
	return l.Addr().String(), nil
}

// benchService is a Service with one EndpointSlice pointing at addr.
func benchService(name, addr string) string {
	host, port, _ := net.SplitHostPort(addr)
	return fmt.Sprintf(`apiVersion: v1
kind: Service
metadata: {namespace: bench, name: %[1]s}
spec: {ports: [{port: 80}]}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {namespace: bench, name: %[1]s-a, labels: {kubernetes.io/service-name: %[1]s}}
addressType: IPv4
ports: [{port: %[3]s}]
endpoints:
  - {addresses: [%[2]s], conditions: {ready: true}, targetRef: {kind: Pod, namespace: bench, name: %[1]s-pod}}
`, name, host, port)
}

// benchRoute is one route as a new application brings it: an Ingress for
// host, its own Service and an EndpointSlice with one echo server. On
// HAProxy 3.4 it becomes a new dynamic backend, its server and two map
// entries, at runtime.
func benchRoute(name, host, echo string) string {
	return benchIngress(name, host, name) + "---\n" + benchService(name, echo)
}

// benchIngress routes host to the Service svc.
func benchIngress(name, host, svc string) string {
	return fmt.Sprintf(`apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {namespace: bench, name: %[1]s, creationTimestamp: "2026-01-01T00:00:00Z"}
spec:
  ingressClassName: haptic
  rules:
    - host: %[2]s
      http:
        paths:
          - {path: /, pathType: Prefix, backend: {service: {name: %[3]s, port: {number: 80}}}}
`, name, host, svc)
}
