package local

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/haptic-io/haptic/agentapi"
	"github.com/haptic-io/haptic/internal/agent"
	"github.com/haptic-io/haptic/internal/controller"
	"github.com/haptic-io/haptic/internal/echo"
	"github.com/haptic-io/haptic/rendergate"
	"github.com/haptic-io/haptic/renderplan"
	"github.com/haptic-io/haptic/templating"
)

// Defaults of [Config].
const (
	DefaultListen      = "127.0.0.1:8080"
	DefaultStatsListen = "127.0.0.1:8404"
	// PodName is the pod label of the one local target.
	PodName = "local"
)

// Config configures [Run].
type Config struct {
	// LoadConfig loads the merged template config (stock libraries, then
	// the operator's file). Required. It is called at start and whenever
	// ConfigPath changes.
	LoadConfig func() (*templating.Config, error)
	// ConfigPath is the operator's config file, watched for changes; empty
	// watches nothing.
	ConfigPath string
	// Resources is the directory of manifests. Required.
	Resources string
	// HAProxy is the haproxy binary. Required.
	HAProxy string
	// Listen is the HTTP frontend's address; empty means [DefaultListen].
	// It overrides the config's extraContext httpAddress and httpPort.
	Listen string
	// StatsListen is the stats/health frontend's address; empty means
	// [DefaultStatsListen] (extraContext statsAddress, statsPort).
	StatsListen string
	// HTTPSPort is the HTTPS frontend's port on Listen's address; zero
	// disables it (extraContext httpsPort).
	HTTPSPort int
	// MetricsListen serves Prometheus metrics (controller and agent) on
	// /metrics; empty serves none.
	MetricsListen string
	// WorkDir holds HAProxy's tree, the agent's state and the sockets.
	// Empty means a new temporary directory, removed at the end. One that
	// an earlier run used is a restart (see the package doc); one that a
	// running local mode uses is refused.
	WorkDir string
	// Debounce is the loop's opt-in holdoff
	// ([controller.DebounceConfig].Interval); zero, the CLI's default,
	// holds no change.
	Debounce time.Duration
	// MinReloadInterval is the agent's reload pacing; zero means the
	// agent's default (2 s), negative means none.
	MinReloadInterval time.Duration
	// IdleGC collects garbage between reconciliations rather than during
	// them (controller.Config.IdleGC); the CLI's default is on.
	IdleGC bool
	// CheckSpacing is the least time between two background haproxy -c
	// checks (controller.Config.CheckSpacing); zero checks every plan. The
	// CLI's default is [controller.DefaultCheckSpacing].
	CheckSpacing time.Duration
	// Echo lists addresses to start echo servers on; empty starts none.
	Echo []string
	// Log receives the logs of every part; nil discards.
	Log *slog.Logger
	// HAProxyOutput receives HAProxy's stdout and stderr; nil discards.
	HAProxyOutput io.Writer
	// Registerer receives the metrics as well (tests read them); nil
	// means a private registry.
	Registry *prometheus.Registry
	// Ready, when set, is called once everything serves, before the first
	// render, with the addresses in use. It must not block.
	Ready func(Info)
}

// Info describes a running local mode.
type Info struct {
	// HTTPAddr is the HTTP frontend, "127.0.0.1:8080".
	HTTPAddr string
	// MetricsAddr is the metrics listener, "" when none.
	MetricsAddr string
	// AgentURL is the agent API's base URL.
	AgentURL string
	// HAProxyVersion is the binary's version ("3.4.7-1").
	HAProxyVersion string
	// HAProxyPID is the HAProxy master's process ID.
	HAProxyPID int
	// BaseDir is HAProxy's tree.
	BaseDir string
	// Echo are the echo servers' addresses.
	Echo []string
	// Loop is the running controller loop (for its status).
	Loop *controller.Loop
	// Agent is a client of the in-process agent.
	Agent *agentapi.Client
}

func (c Config) withDefaults() (Config, error) {
	var errs []error
	if c.LoadConfig == nil {
		errs = append(errs, errors.New("missing LoadConfig"))
	}
	if c.Resources == "" {
		errs = append(errs, errors.New("missing Resources"))
	}
	if c.HAProxy == "" {
		errs = append(errs, errors.New("missing HAProxy"))
	}
	if c.Listen == "" {
		c.Listen = DefaultListen
	}
	if c.StatsListen == "" {
		c.StatsListen = DefaultStatsListen
	}
	for name, addr := range map[string]string{"Listen": c.Listen, "StatsListen": c.StatsListen} {
		if _, _, err := splitHostPort(addr); err != nil {
			errs = append(errs, fmt.Errorf("bad %s: %w", name, err))
		}
	}
	if c.HTTPSPort < 0 || c.HTTPSPort > 65535 {
		errs = append(errs, fmt.Errorf("bad HTTPSPort %d: not a port", c.HTTPSPort))
	}
	if c.Debounce < 0 {
		errs = append(errs, fmt.Errorf("negative Debounce %v", c.Debounce))
	}
	if c.Log == nil {
		c.Log = slog.New(slog.DiscardHandler)
	}
	if c.Registry == nil {
		c.Registry = prometheus.NewRegistry()
	}
	if err := errors.Join(errs...); err != nil {
		return c, fmt.Errorf("local config: %w", err)
	}
	return c, nil
}

func splitHostPort(addr string) (string, int, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, err
	}
	n, err := strconv.Atoi(port)
	if err != nil || n <= 0 || n > 65535 {
		return "", 0, fmt.Errorf("address %q: port must be 1-65535", addr)
	}
	return host, n, nil
}

// maxSocketPath is the longest unix socket path HAProxy accepts.
const maxSocketPath = 97

// paths of one run.
type paths struct {
	work, base, run, check, statsSocket, masterSocket string
}

// Run runs local mode until ctx ends, then stops HAProxy and everything
// else it started and returns nil; it returns an error when something
// could not start or a part failed.
func Run(ctx context.Context, cfg Config) (err error) {
	cfg, err = cfg.withDefaults()
	if err != nil {
		return err
	}
	log := cfg.Log
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	p, cleanup, err := workDir(cfg.WorkDir)
	if err != nil {
		return err
	}
	defer cleanup()

	engine, err := compile(cfg, p.statsSocket)
	if err != nil {
		return err
	}

	var echoes *echo.Servers
	if len(cfg.Echo) > 0 {
		if echoes, err = echo.Start(cfg.Echo); err != nil {
			return err
		}
		defer echoes.Close()
	}

	// The agent first: it locks the tree and finishes an apply a crash
	// interrupted before HAProxy reads a file of it.
	reg := cfg.Registry
	a, err := agent.New(agent.Config{
		BaseDir: p.base, MasterSocket: p.masterSocket, StatsSocket: p.statsSocket,
		MinReloadInterval: cfg.MinReloadInterval, Version: "local", Log: log.With("component", "agent"), Registerer: reg,
	})
	if err != nil {
		var le *agent.LockError
		if errors.As(err, &le) {
			return fmt.Errorf("local: work dir %s is in use (%w): stop that process first", p.work, le)
		}
		return fmt.Errorf("local: %w", err)
	}
	defer func() { _ = a.Close() }()

	// HAProxy, under supervision.
	sup, err := startHAProxy(ctx, cfg, p, a)
	if err != nil {
		return err
	}
	defer func() {
		stopCtx, stop := context.WithTimeout(context.Background(), 15*time.Second)
		defer stop()
		if serr := sup.Stop(stopCtx); serr != nil {
			log.Warn("stop haproxy", "error", serr)
		}
		log.Info("haproxy stopped")
	}()

	// The agent runs behind its HTTP contract.
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel() // stop the goroutines before waiting for them
	agentErr := make(chan error, 1)
	wg.Go(func() { agentErr <- a.Run(ctx) })
	if err := waitReady(ctx, a); err != nil {
		return err
	}

	token, err := newToken()
	if err != nil {
		return err
	}
	agentURL, stopAgentAPI, err := serve("127.0.0.1:0", agentapi.NewHandler(a, agentapi.HandlerOptions{Token: token, Log: log.With("component", "agentapi")}))
	if err != nil {
		return fmt.Errorf("local: agent api: %w", err)
	}
	defer stopAgentAPI()
	client := &agentapi.Client{BaseURL: agentURL, Token: token}

	// The templates are the operator's own: the check runs as the user
	// running local mode (the Kubernetes controller drops to nobody).
	self := &rendergate.User{UID: uint32(os.Getuid()), GID: uint32(os.Getgid())}
	checker, err := rendergate.NewHAProxyChecker(rendergate.Config{Binary: cfg.HAProxy, ScratchDir: p.check, RunAs: self, Log: log.With("component", "gate")})
	if err != nil {
		return fmt.Errorf("local: %w", err)
	}
	src, err := controller.NewDirSource(controller.DirSourceConfig{Dir: cfg.Resources, Resources: engine.Config().WatchedResources, Log: log})
	if err != nil {
		return fmt.Errorf("local: %w", err)
	}
	loop, err := controller.New(controller.Config{
		Source:       src,
		Engine:       engine,
		Targets:      func() []controller.Target { return []controller.Target{{Name: PodName, Agent: client}} },
		Checker:      checker,
		Debounce:     controller.DebounceConfig{Interval: cfg.Debounce},
		IdleGC:       cfg.IdleGC,
		CheckSpacing: cfg.CheckSpacing,
		Log:          log,
		Registerer:   reg,
	})
	if err != nil {
		return fmt.Errorf("local: %w", err)
	}

	metricsAddr := ""
	if cfg.MetricsListen != "" {
		_ = reg.Register(collectors.NewGoCollector())
		mux := http.NewServeMux()
		mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
		u, stopMetrics, err := serve(cfg.MetricsListen, mux)
		if err != nil {
			return fmt.Errorf("local: metrics: %w", err)
		}
		defer stopMetrics()
		metricsAddr = u[len("http://"):]
	}

	if cfg.ConfigPath != "" {
		w, err := newConfigWatcher(cfg, p.statsSocket, loop, engine.Config().WatchedResources)
		if err != nil {
			return err
		}
		wg.Go(func() { w.run(ctx) })
	}

	if cfg.Ready != nil {
		cfg.Ready(Info{
			HTTPAddr: cfg.Listen, MetricsAddr: metricsAddr, AgentURL: agentURL, HAProxyVersion: versionOf(checker.Version()),
			HAProxyPID: sup.PID(), BaseDir: p.base, Echo: echoes.Addrs(), Loop: loop, Agent: client,
		})
	}
	log.Info("local mode serving", "http", cfg.Listen, "metrics", metricsAddr, "haproxy", versionOf(checker.Version()), "base_dir", p.base, "resources", cfg.Resources)

	loopErr := make(chan error, 1)
	wg.Go(func() { loopErr <- loop.Run(ctx) })
	select {
	case <-ctx.Done():
		return nil
	case err := <-loopErr:
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("local: controller loop: %w", err)
	case err := <-agentErr:
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("local: agent: %w", err)
	case <-sup.Done():
		return fmt.Errorf("local: haproxy exited: %w", sup.Wait())
	}
}

// startHAProxy starts HAProxy on the tree the agent has committed, so
// that a restart on an existing work dir serves what the last run applied
// from its first moment. Without one, or when HAProxy refuses it, it
// writes the bootstrap configuration and starts on that; the agent sees
// the bootstrap as drift (its state lists the bootstrap's digest), so the
// first apply carries the full state and a reload.
func startHAProxy(ctx context.Context, cfg Config, p paths, a *agent.Agent) (*agent.Supervisor, error) {
	log := cfg.Log
	sc := agent.SupervisorConfig{
		Binary: cfg.HAProxy, BaseDir: p.base, MasterSocket: p.masterSocket, StatsSocket: p.statsSocket, Output: cfg.HAProxyOutput, Log: log,
	}
	if st, err := a.State(ctx); err == nil && st.AppliedPlanID != "" {
		sup, err := agent.StartSupervisor(ctx, sc)
		if err == nil {
			log.Info("haproxy started on the tree of the last run", "plan_id", st.AppliedPlanID)
			return sup, nil
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("local: %w", err)
		}
		log.Warn("haproxy did not start on the tree of the last run; starting on the bootstrap configuration", "plan_id", st.AppliedPlanID, "error", err)
	}
	if err := os.WriteFile(filepath.Join(p.base, renderplan.ConfigPath), agent.BootstrapConfig(p.statsSocket, []string{cfg.Listen}), 0o644); err != nil {
		return nil, fmt.Errorf("local: bootstrap config: %w", err)
	}
	a.CheckDrift()
	sup, err := agent.StartSupervisor(ctx, sc)
	if err != nil {
		return nil, fmt.Errorf("local: %w", err)
	}
	return sup, nil
}

// TempRoot is the directory in which a run without [Config.WorkDir]
// makes its temporary work dir: /dev/shm when that is a tmpfs and TMPDIR
// is unset, else os.TempDir().
func TempRoot() string {
	if d := memoryTempDir(); d != "" {
		return d
	}
	return os.TempDir()
}

// workDir makes the directories of one run under dir, or under a new
// temporary directory under TempRoot when dir is empty (removed by
// cleanup).
func workDir(dir string) (paths, func(), error) {
	cleanup := func() {}
	temp := dir == ""
	if temp {
		d, err := os.MkdirTemp(TempRoot(), "haptic-local-")
		if err != nil {
			return paths{}, nil, fmt.Errorf("local: work dir: %w", err)
		}
		dir = d
		cleanup = func() { _ = os.RemoveAll(d) }
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return paths{}, nil, fmt.Errorf("local: work dir: %w", err)
	}
	p := paths{work: abs, base: filepath.Join(abs, "haproxy"), run: filepath.Join(abs, "run"), check: filepath.Join(abs, "check")}
	p.statsSocket = filepath.Join(p.run, "stats.sock")
	p.masterSocket = filepath.Join(p.run, "master.sock")
	for _, d := range []string{p.base, p.run, p.check} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			cleanup()
			return paths{}, nil, fmt.Errorf("local: work dir: %w", err)
		}
	}
	// HAProxy refuses socket paths longer than 97 bytes: use a short
	// directory for the sockets when the work dir is deep.
	if len(p.masterSocket) > maxSocketPath {
		run, err := socketDir(abs, temp)
		if err != nil {
			cleanup()
			return paths{}, nil, fmt.Errorf("local: socket dir: %w", err)
		}
		if temp {
			prev := cleanup
			cleanup = func() { _ = os.RemoveAll(run); prev() }
		}
		p.run = run
		p.statsSocket = filepath.Join(run, "stats.sock")
		p.masterSocket = filepath.Join(run, "master.sock")
		if len(p.masterSocket) > maxSocketPath {
			cleanup()
			return paths{}, nil, fmt.Errorf("local: temporary directory %s is too deep for unix socket paths", run)
		}
	}
	return p, cleanup, nil
}

// socketDir returns a short directory for the sockets of work dir abs.
// A temporary work dir gets a new temporary directory (removed with it).
// Any other gets the same directory
// on every run, named after its path and kept: the configuration the
// last run committed names its stats socket, and a restart that starts
// HAProxy on that configuration must find the socket where it names it.
// The directory must be this user's and private, and not a symbolic link.
func socketDir(abs string, temp bool) (string, error) {
	if temp {
		return os.MkdirTemp("", "haptic-run-")
	}
	sum := sha256.Sum256([]byte(abs))
	dir := filepath.Join(os.TempDir(), "haptic-run-"+hex.EncodeToString(sum[:6]))
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", err
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return "", err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !fi.IsDir() || fi.Mode().Perm() != 0o700 || !ok || int(st.Uid) != os.Getuid() {
		return "", fmt.Errorf("%s is not a private directory of this user (mode %v)", dir, fi.Mode())
	}
	return dir, nil
}

// compile loads and compiles the config with local mode's addresses.
func compile(cfg Config, statsSocket string) (*templating.Engine, error) {
	tc, err := cfg.LoadConfig()
	if err != nil {
		return nil, fmt.Errorf("local: config: %w", err)
	}
	host, port, _ := splitHostPort(cfg.Listen)
	shost, sport, _ := splitHostPort(cfg.StatsListen)
	x := make(map[string]any, len(tc.ExtraContext)+6)
	for k, v := range tc.ExtraContext {
		x[k] = v
	}
	x["httpAddress"], x["httpPort"] = host, int64(port)
	x["statsAddress"], x["statsPort"] = shost, int64(sport)
	x["httpsPort"] = int64(cfg.HTTPSPort)
	x["statsSocket"] = statsSocket
	tc.ExtraContext = x
	e, err := templating.Compile(tc)
	if err != nil {
		return nil, fmt.Errorf("local: config: %w", err)
	}
	return e, nil
}

// serve serves h on addr until the returned stop is called.
func serve(addr string, h http.Handler) (url string, stop func(), err error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(l)
	}()
	return "http://" + l.Addr().String(), func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			_ = srv.Close()
		}
		<-done
	}, nil
}

// waitReady waits (at most 10 s) until HAProxy's worker answers on the
// stats socket, so that the first apply does not meet a master that is
// still starting its worker.
func waitReady(ctx context.Context, a *agent.Agent) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for {
		err := a.Ready(ctx)
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("local: haproxy worker not ready: %w", err)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// newToken returns a random bearer token for the loopback agent API.
func newToken() (agentapi.Token, error) {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("local: token: %w", err)
	}
	return agentapi.ParseToken(hex.EncodeToString(b))
}

// versionOf extracts "3.4.7-1" from HAProxy's version line.
func versionOf(line string) string {
	f := strings.Fields(line)
	for i, w := range f {
		if w == "version" && i+1 < len(f) {
			return f[i+1]
		}
	}
	return line
}
