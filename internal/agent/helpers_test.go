package agent_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/haptic-io/haptic/agentapi"
	"github.com/haptic-io/haptic/deployplan"
	"github.com/haptic-io/haptic/haproxysock"
	"github.com/haptic-io/haptic/internal/agent"
	"github.com/haptic-io/haptic/internal/haproxytest"
	"github.com/haptic-io/haptic/renderplan"
)

// site is one HAProxy started by the test through agent.Supervisor on a
// bootstrap config, with its base directory, sockets and frontend port.
type site struct {
	series  string
	version string
	dir     string
	stats   string
	master  string
	port    int
	sup     *agent.Supervisor
}

// startSite starts HAProxy series on the bootstrap config (503 to
// everything) and stops it in t.Cleanup.
func startSite(t testing.TB, series string) *site {
	t.Helper()
	dir, err := os.MkdirTemp("", "hxa-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return startSiteIn(t, series, dir)
}

// startSiteIn is startSite in directory dir, which the caller made and
// removes.
func startSiteIn(t testing.TB, series, dir string) *site {
	t.Helper()
	bin := haproxytest.Binary(t, series)
	dir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	s := &site{series: series, dir: dir, stats: filepath.Join(dir, "stats.sock"), master: filepath.Join(dir, "master.sock"), port: haproxytest.FreePort(t)}
	boot := agent.BootstrapConfig(s.stats, []string{fmt.Sprintf("127.0.0.1:%d", s.port)})
	if err := os.WriteFile(filepath.Join(dir, "haproxy.cfg"), boot, 0o644); err != nil {
		t.Fatal(err)
	}
	logf, err := os.Create(filepath.Join(dir, "haproxy.log"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	s.sup, err = agent.StartSupervisor(ctx, agent.SupervisorConfig{Binary: bin, BaseDir: dir, MasterSocket: s.master, StatsSocket: s.stats, Output: logf})
	if err != nil {
		b, _ := os.ReadFile(logf.Name())
		t.Fatalf("start haproxy %s: %v\n%s", series, err, b)
	}
	t.Cleanup(func() {
		_ = s.sup.Stop(context.Background())
		_ = logf.Close()
		if t.Failed() {
			b, _ := os.ReadFile(logf.Name())
			t.Logf("haproxy output:\n%s", b)
		}
	})
	info, err := (&haproxysock.Client{Path: s.stats}).Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s.version = info.Version
	return s
}

// config returns an agent config on the site; pacing is off unless the
// test sets it.
func (s *site) config(t testing.TB) agent.Config {
	return agent.Config{
		BaseDir:           s.dir,
		MasterSocket:      s.master,
		StatsSocket:       s.stats,
		MinReloadInterval: -1,
		DriftInterval:     -1,
		RemovableWait:     500 * time.Millisecond,
		DeleteRetry:       50 * time.Millisecond,
		Log:               testLogger(t),
	}
}

// newAgent starts an agent on the site and runs it until the test ends.
func (s *site) newAgent(t testing.TB, mutate func(*agent.Config)) *agent.Agent {
	t.Helper()
	cfg := s.config(t)
	if mutate != nil {
		mutate(&cfg)
	}
	a, err := agent.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	runAgent(t, a)
	return a
}

func runAgent(t testing.TB, a *agent.Agent) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { _ = a.Run(ctx) })
	t.Cleanup(func() {
		cancel()
		wg.Wait()
		_ = a.Close()
	})
}

func (s *site) url() string { return fmt.Sprintf("http://127.0.0.1:%d/", s.port) }

// get sends one request with the Host header.
func (s *site) get(t testing.TB, host string) (int, string) {
	t.Helper()
	return haproxytest.Get(t, s.url(), host)
}

// reloads returns the master's reload counter.
func (s *site) reloads(t testing.TB) int {
	t.Helper()
	p, err := (&haproxysock.Master{Path: s.master}).ShowProc(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return p.Master.Reloads
}

// cmd runs one command on the worker socket.
func (s *site) cmd(t testing.TB, line string) string {
	t.Helper()
	return rawCmd(t, s.stats, line)
}

// rawCmd sends one line on a unix socket in non-interactive mode and
// returns the whole answer.
func rawCmd(t testing.TB, path, line string) string {
	t.Helper()
	c, err := net.DialTimeout("unix", path, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, line+"\n"); err != nil {
		t.Fatal(err)
	}
	_ = c.(*net.UnixConn).CloseWrite()
	b, err := io.ReadAll(c)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// route is one host routed through the host map to a backend.
type route struct {
	host, backend string
	servers       []renderplan.Server
}

func server(name string, e *haproxytest.Echo) renderplan.Server {
	return renderplan.Server{Name: name, Address: "127.0.0.1", Port: e.Port, Weight: renderplan.DefaultWeight}
}

// world is what a test renders: routes plus extra core lines.
type world struct {
	routes []route
	// extra is appended to the frontend (a broken keyword, say).
	extra string
	// general adds general/<name> files.
	general map[string]string
	// paths adds, as the ingress library renders them, maps/paths-prefix.map
	// ("<host>/ <backend>" per route) and maps/paths-exact.map (one
	// "<host>/healthz <backend>" per route), read by the frontend into a
	// variable that routing does not use: a route add then changes
	// haproxy.cfg and two maps.
	paths bool
}

// build renders w for the site: the global section with the site's
// stats socket, a host map and one dynamic backend per route.
func (s *site) build(t testing.TB, w world) *renderplan.Output {
	t.Helper()
	b := renderplan.NewBuilder()
	b.Text(fmt.Sprintf(`global
    stats socket %s mode 600 level admin expose-fd listeners
    stats timeout 1h
    hard-stop-after 15s

defaults base
    mode http
    timeout connect 5s
    timeout client 30s
    timeout server 30s

frontend fe_main from base
    bind 127.0.0.1:%d
    use_backend %%[req.hdr(host),host_only,lower,map(maps/hosts.map)]
    default_backend be_default
%s%s
backend be_default from base
    http-request return status 404 content-type text/plain string "no route"

`, s.stats, s.port, pathLines(w), w.extra))
	if err := b.Profile("web", []string{"mode http", "balance roundrobin", "timeout connect 5s", "timeout server 30s"}); err != nil {
		t.Fatal(err)
	}
	hosts := renderplan.Map{Path: "maps/hosts.map"}
	for _, r := range w.routes {
		if err := b.Backend(renderplan.Backend{Name: r.backend, GUID: "g-" + r.backend, Profile: "web", Servers: r.servers}); err != nil {
			t.Fatal(err)
		}
		hosts.Entries = append(hosts.Entries, renderplan.MapEntry{Key: r.host, Value: r.backend})
	}
	if err := b.Map(hosts); err != nil {
		t.Fatal(err)
	}
	if w.paths {
		prefix, exact := renderplan.Map{Path: "maps/paths-prefix.map"}, renderplan.Map{Path: "maps/paths-exact.map"}
		for _, r := range w.routes {
			prefix.Entries = append(prefix.Entries, renderplan.MapEntry{Key: r.host + "/", Value: r.backend})
			exact.Entries = append(exact.Entries, renderplan.MapEntry{Key: r.host + "/healthz", Value: r.backend})
		}
		for _, m := range []renderplan.Map{prefix, exact} {
			if err := b.Map(m); err != nil {
				t.Fatal(err)
			}
		}
	}
	for name, body := range w.general {
		if err := b.File("general/"+name, renderplan.FileGeneral, []byte(body), false); err != nil {
			t.Fatal(err)
		}
	}
	out, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// pathLines returns the frontend lines that read the path maps of w.
func pathLines(w world) string {
	if !w.paths {
		return ""
	}
	return "    http-request set-var(txn.key) req.hdr(host),host_only,lower\n" +
		"    http-request set-var(txn.exact) var(txn.key),map_str(maps/paths-exact.map)\n" +
		"    http-request set-var(txn.prefix) var(txn.key),map_beg(maps/paths-prefix.map)\n"
}

// fullRequest brings a pod from anything to out: every body, a reload.
func fullRequest(out *renderplan.Output, fence uint64) *agentapi.ApplyRequest {
	req := &agentapi.ApplyRequest{PlanID: out.Plan.ID(), Fence: fence, Mode: agentapi.ModeAuto, Verdict: agentapi.VerdictReload,
		Files: out.Plan.Files, Bodies: map[string][]byte{}}
	for _, f := range out.Files {
		req.Bodies[f.Path] = f.Body
	}
	return req
}

// diffRequest brings a pod from prev to next as the controller would:
// deployplan.Diff's verdict and ops, and the bodies of changed files.
func diffRequest(t testing.TB, s *site, prev, next *renderplan.Output, fence uint64) (*agentapi.ApplyRequest, deployplan.Decision) {
	t.Helper()
	d := deployplan.Diff(next.Plan, deployplan.Baseline{Plan: prev.Plan, HAProxyVersion: s.version, AgentOps: agentapi.OpKinds()})
	req := &agentapi.ApplyRequest{PlanID: next.Plan.ID(), ExpectedPlanID: prev.Plan.ID(), Fence: fence,
		Verdict: d.Verdict, Ops: d.Ops, Files: next.Plan.Files, Bodies: map[string][]byte{}}
	old := map[string]renderplan.Digest{}
	for _, f := range prev.Plan.Files {
		old[f.Path] = f.Digest
	}
	for _, f := range next.Files {
		if old[f.Path] != renderplan.DigestOf(f.Body) {
			req.Bodies[f.Path] = f.Body
		}
	}
	return req, d
}

// mustApply applies req and fails the test on a NACK.
func mustApply(t testing.TB, a agentapi.Applier, req *agentapi.ApplyRequest) *agentapi.ApplyResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := a.Apply(ctx, req)
	if err != nil {
		t.Fatalf("apply %s: %v", req.PlanID, err)
	}
	return res
}

// treeFiles reads haproxy.cfg and every file under maps/, certs/ and
// general/ of dir.
func treeFiles(t testing.TB, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	if b, err := os.ReadFile(filepath.Join(dir, "haproxy.cfg")); err == nil {
		out["haproxy.cfg"] = string(b)
	}
	for _, d := range []string{"maps", "certs", "general"} {
		_ = filepath.WalkDir(filepath.Join(dir, d), func(p string, e fs.DirEntry, err error) error {
			if err != nil || e.IsDir() {
				return nil
			}
			b, rerr := os.ReadFile(p)
			if rerr != nil {
				t.Fatal(rerr)
			}
			rel, _ := filepath.Rel(dir, p)
			out[filepath.ToSlash(rel)] = string(b)
			return nil
		})
	}
	return out
}

// outFiles returns the files of out as treeFiles does.
func outFiles(out *renderplan.Output) map[string]string {
	m := map[string]string{}
	for _, f := range out.Files {
		m[f.Path] = string(f.Body)
	}
	return m
}

// testLogger writes through t.Log.
func testLogger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(tWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type tWriter struct{ t testing.TB }

func (w tWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// nackStage returns the stage of a NACK, failing the test on anything else.
func nackStage(t testing.TB, err error) *agentapi.NackError {
	t.Helper()
	var nack *agentapi.NackError
	if !errors.As(err, &nack) {
		t.Fatalf("error %v (%T) is not a *agentapi.NackError", err, err)
	}
	return nack
}

// shopRouteAdd is the route add many tests make: an agent serving
// api.example.com (applied in full, fence 1), then the runtime request
// (fence 2) that adds shop.example.com on its own echo backend. It does
// not apply the request.
type shopRouteAdd struct {
	prev, next *renderplan.Output
	req        *agentapi.ApplyRequest
}

func addShopRoute(t *testing.T, s *site, a *agent.Agent) shopRouteAdd {
	t.Helper()
	api, shop := haproxytest.StartEcho(t, "api-a"), haproxytest.StartEcho(t, "shop-a")
	w := world{routes: []route{{"api.example.com", "be_api", []renderplan.Server{server("api-a", api)}}}}
	prev := s.build(t, w)
	mustApply(t, a, fullRequest(prev, 1))
	w.routes = append(w.routes, route{"shop.example.com", "be_shop", []renderplan.Server{server("shop-a", shop)}})
	next := s.build(t, w)
	req, d := diffRequest(t, s, prev, next, 2)
	if d.Verdict != deployplan.VerdictRuntime {
		t.Fatalf("verdict %s, want runtime:\n%s", d.Verdict, d)
	}
	return shopRouteAdd{prev: prev, next: next, req: req}
}

// opsMarkLeft reports whether the agent whose state directory is under
// dir left an ops mark: the file holds more than the blanks of a cleared
// one.
func opsMarkLeft(t testing.TB, dir string) bool {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, ".haptic", "ops.json"))
	if os.IsNotExist(err) {
		return false
	}
	if err != nil {
		t.Fatal(err)
	}
	return len(bytes.TrimSpace(b)) > 0
}
