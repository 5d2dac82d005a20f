package agentcmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/signal"
	"sort"
	"sync"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/urfave/cli/v2"

	"github.com/haptic-io/haptic/agentapi"
	"github.com/haptic-io/haptic/internal/agent"
)

// Command is `haptic agent`: the agent, with its state and bootstrap
// subcommands.
func Command() *cli.Command {
	return &cli.Command{
		Name:  "agent",
		Usage: "run the per-pod agent that applies plans to one HAProxy",
		Description: "Serves the agent API (GET /v1/state, POST /v1/apply, /healthz, /readyz, /metrics) and applies\n" +
			"plans to the HAProxy tree under --base-dir through its worker and master sockets. With\n" +
			"--haproxy-binary it also starts HAProxy (master-worker) on a bootstrap config answering 503\n" +
			"until the first plan lands (never over a tree it has committed); otherwise HAProxy runs on\n" +
			"its own and the agent only connects. One agent per tree: a second is refused.\n\n" +
			"/v1/ takes the bearer token; /healthz, /readyz and /metrics answer without one (probes and\n" +
			"Prometheus). Without --listen the API listens on the pod IP ($POD_IP, which the chart sets\n" +
			"from the downward API) on port 5555, else on 127.0.0.1:5555 only: never on every interface\n" +
			"unless --listen says so (\":5555\").",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "base-dir", Usage: "HAProxy base directory (haproxy.cfg, maps/, certs/, general/)", EnvVars: []string{"HAPTIC_BASE_DIR"}},
			&cli.StringFlag{Name: "master-socket", Usage: "HAProxy master CLI socket (haproxy -W -S)", EnvVars: []string{"HAPTIC_MASTER_SOCKET"}},
			&cli.StringFlag{Name: "stats-socket", Usage: "HAProxy worker stats socket (level admin)", EnvVars: []string{"HAPTIC_STATS_SOCKET"}},
			&cli.StringFlag{Name: "state-dir", Usage: "journal, state and last-known-good set (default <base-dir>/.haptic)", EnvVars: []string{"HAPTIC_STATE_DIR"}},
			&cli.StringFlag{Name: "listen", Usage: "API listen address; /metrics, /healthz and /readyz answer on it without a token", DefaultText: "<pod-ip>:5555, else 127.0.0.1:5555", EnvVars: []string{"HAPTIC_LISTEN"}},
			&cli.StringFlag{Name: "pod-ip", Usage: "the pod's IP: the API listens on <pod-ip>:5555 when --listen is not given", EnvVars: []string{"HAPTIC_POD_IP", "POD_IP"}},
			&cli.DurationFlag{Name: "read-header-timeout", Value: defaultReadHeaderTimeout, Usage: "bound on reading a request's headers", EnvVars: []string{"HAPTIC_READ_HEADER_TIMEOUT"}},
			&cli.DurationFlag{Name: "read-timeout", Value: agentapi.DefaultReadTimeout, Usage: "bound on reading an apply's manifest, and each file body beyond what its size takes at --min-read-rate; a request that misses it is answered 408 (negative: none)", EnvVars: []string{"HAPTIC_READ_TIMEOUT"}},
			&cli.IntFlag{Name: "min-read-rate", Value: int(agentapi.DefaultMinReadRate >> 10), Usage: "slowest rate a file body may arrive at, in KiB/s (see --read-timeout)", EnvVars: []string{"HAPTIC_MIN_READ_RATE"}},
			&cli.DurationFlag{Name: "idle-timeout", Value: defaultIdleTimeout, Usage: "how long a keep-alive connection may wait for its next request", EnvVars: []string{"HAPTIC_IDLE_TIMEOUT"}},
			&cli.StringFlag{Name: "token-file", Usage: "file holding the bearer token the controller presents", EnvVars: []string{"HAPTIC_TOKEN_FILE"}},
			&cli.BoolFlag{Name: "insecure-no-auth", Usage: "serve the API without a token (local use on loopback only)", EnvVars: []string{"HAPTIC_INSECURE_NO_AUTH"}},
			&cli.StringFlag{Name: "tls-cert", Usage: "serve TLS with this certificate (PEM)", EnvVars: []string{"HAPTIC_TLS_CERT"}},
			&cli.StringFlag{Name: "tls-key", Usage: "private key of --tls-cert (PEM)", EnvVars: []string{"HAPTIC_TLS_KEY"}},
			&cli.DurationFlag{Name: "min-reload-interval", Value: agent.DefaultMinReloadInterval, Usage: "least time between reloads (ceiling 60s); reloads inside the window are scheduled", EnvVars: []string{"HAPTIC_MIN_RELOAD_INTERVAL"}},
			&cli.DurationFlag{Name: "reload-timeout", Value: agent.DefaultReloadTimeout, Usage: "bound on a reload and its verification (ceiling 60s)", EnvVars: []string{"HAPTIC_RELOAD_TIMEOUT"}},
			&cli.DurationFlag{Name: "drift-interval", Value: agent.DefaultDriftInterval, Usage: "how often the tree is re-hashed (negative: never)", EnvVars: []string{"HAPTIC_DRIFT_INTERVAL"}},
			&cli.StringFlag{Name: "haproxy-binary", Usage: "start and supervise this haproxy (local mode, tests)", EnvVars: []string{"HAPTIC_HAPROXY_BINARY"}},
			&cli.StringSliceFlag{Name: "bootstrap-bind", Usage: "bind address of the bootstrap 503 frontend (with --haproxy-binary; repeatable)", EnvVars: []string{"HAPTIC_BOOTSTRAP_BIND"}},
			&cli.BoolFlag{Name: "ready-after-plan", Usage: "/readyz answers 503 until a plan is applied (HAProxy serves the bootstrap config's 503 before): a pod then joins its Service once it routes", EnvVars: []string{"HAPTIC_READY_AFTER_PLAN"}},
			&cli.StringFlag{Name: "log-level", Value: "info", Usage: "debug, info, warn or error", EnvVars: []string{"HAPTIC_LOG_LEVEL"}},
		},
		Action: func(c *cli.Context) error {
			ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
			defer stop()
			o, err := agentOptionsFrom(c)
			if err != nil {
				return cli.Exit(err.Error(), 2)
			}
			return runAgent(ctx, o)
		},
		Subcommands: []*cli.Command{agentStateCommand(), agentBootstrapCommand()},
	}
}

// Defaults of the agent API server's timeouts. There is no write
// timeout: an apply is answered after its reload, which --reload-timeout
// bounds.
const (
	defaultReadHeaderTimeout = 10 * time.Second
	defaultIdleTimeout       = 2 * time.Minute
	// defaultAgentPort is the API's port when --listen is not given.
	defaultAgentPort = "5555"
)

// agentOptions is everything `haptic agent` runs with.
type agentOptions struct {
	cfg    agent.Config
	listen string
	// Timeouts of the API server: see the flags.
	readHeaderTimeout, readTimeout, idleTimeout time.Duration
	minReadRate                                 int64 // bytes per second
	token                                       agentapi.Token
	noAuth                                      bool
	tlsCert                                     string
	tlsKey                                      string
	haproxy                                     string
	binds                                       []string
	log                                         *slog.Logger
	ready                                       func(addr string) // tests: called with the bound address
	haproxyOut                                  io.Writer
}

func agentOptionsFrom(c *cli.Context) (agentOptions, error) {
	for _, f := range []string{"base-dir", "master-socket", "stats-socket"} {
		if c.String(f) == "" {
			return agentOptions{}, fmt.Errorf("--%s is required", f)
		}
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(c.String("log-level"))); err != nil {
		return agentOptions{}, fmt.Errorf("--log-level: %w", err)
	}
	log := slog.New(slog.NewTextHandler(c.App.ErrWriter, &slog.HandlerOptions{Level: level}))
	o := agentOptions{
		cfg: agent.Config{
			BaseDir:           c.String("base-dir"),
			MasterSocket:      c.String("master-socket"),
			StatsSocket:       c.String("stats-socket"),
			StateDir:          c.String("state-dir"),
			MinReloadInterval: c.Duration("min-reload-interval"),
			ReloadTimeout:     c.Duration("reload-timeout"),
			DriftInterval:     c.Duration("drift-interval"),
			ReadyAfterPlan:    c.Bool("ready-after-plan"),
			Version:           c.App.Version,
			Log:               log,
		},
		readHeaderTimeout: c.Duration("read-header-timeout"),
		readTimeout:       c.Duration("read-timeout"),
		idleTimeout:       c.Duration("idle-timeout"),
		minReadRate:       int64(c.Int("min-read-rate")) << 10,
		noAuth:            c.Bool("insecure-no-auth"),
		tlsCert:           c.String("tls-cert"),
		tlsKey:            c.String("tls-key"),
		haproxy:           c.String("haproxy-binary"),
		binds:             c.StringSlice("bootstrap-bind"),
		log:               log,
		haproxyOut:        c.App.ErrWriter,
	}
	switch tf := c.String("token-file"); {
	case tf != "" && o.noAuth:
		return o, errors.New("--token-file and --insecure-no-auth exclude each other")
	case tf != "":
		tok, err := agentapi.ReadTokenFile(tf)
		if err != nil {
			return o, err
		}
		o.token = tok
	case !o.noAuth:
		return o, errors.New("--token-file is required (or --insecure-no-auth for local use)")
	}
	if (o.tlsCert == "") != (o.tlsKey == "") {
		return o, errors.New("--tls-cert and --tls-key go together")
	}
	if o.readHeaderTimeout <= 0 || o.idleTimeout <= 0 || o.minReadRate <= 0 {
		return o, errors.New("--read-header-timeout, --idle-timeout and --min-read-rate must be positive")
	}
	listen, note, err := agentListen(c.String("listen"), c.String("pod-ip"))
	if err != nil {
		return o, err
	}
	o.listen = listen
	if note != "" {
		log.Warn(note, "addr", listen)
	}
	return o, nil
}

// agentListen resolves the API's listen address: flag as given, else the
// pod IP on port 5555, else 127.0.0.1:5555. It never picks every
// interface on its own; note says what an operator should know of the
// choice ("" when nothing).
func agentListen(flag, podIP string) (addr, note string, err error) {
	switch {
	case flag != "":
		host, _, err := net.SplitHostPort(flag)
		if err != nil {
			return "", "", fmt.Errorf("--listen: %w", err)
		}
		if ip, perr := netip.ParseAddr(host); host == "" || (perr == nil && ip.IsUnspecified()) {
			return flag, "the agent API listens on every interface; /metrics, /healthz and /readyz answer there without a token", nil
		}
		return flag, "", nil
	case podIP != "":
		ip, err := netip.ParseAddr(podIP)
		if err != nil {
			return "", "", fmt.Errorf("--pod-ip (POD_IP) %q: %w", podIP, err)
		}
		return net.JoinHostPort(ip.String(), defaultAgentPort), "", nil
	}
	return net.JoinHostPort("127.0.0.1", defaultAgentPort),
		"no --listen and no pod IP (POD_IP): the agent API listens on loopback only, out of a controller's reach on another host", nil
}

// runAgent runs the agent, its API server and, optionally, a supervised
// HAProxy until ctx ends.
func runAgent(ctx context.Context, o agentOptions) error {
	// The agent first: it locks the tree and finishes an interrupted
	// apply before a supervised HAProxy reads it.
	a, err := agent.New(o.cfg)
	if err != nil {
		return err
	}
	defer a.Close()
	if o.haproxy != "" {
		sup, err := superviseHAProxy(ctx, o, a)
		if err != nil {
			return err
		}
		defer func() { _ = sup.Stop(context.Background()) }()
	}
	h := agentapi.NewHandler(a, agentapi.HandlerOptions{
		Token:        o.token,
		AllowNoToken: o.noAuth,
		ReadTimeout:  o.readTimeout,
		MinReadRate:  o.minReadRate,
		Log:          o.log,
		Metrics:      promhttp.HandlerFor(a.Gatherer(), promhttp.HandlerOpts{}),
	})
	l, err := net.Listen("tcp", o.listen)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	srv := agentServer(h, o)
	o.log.Info("agent serving", "addr", l.Addr().String(), "tls", o.tlsCert != "", "auth", !o.noAuth)
	if o.ready != nil {
		o.ready(l.Addr().String())
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	var serveErr error
	wg.Go(func() {
		if o.tlsCert != "" {
			serveErr = srv.ServeTLS(l, o.tlsCert, o.tlsKey)
		} else {
			serveErr = srv.Serve(l)
		}
		cancel()
	})
	wg.Go(func() { _ = a.Run(ctx) })
	<-ctx.Done()
	shutdown, done := context.WithTimeout(context.Background(), 10*time.Second)
	defer done()
	_ = srv.Shutdown(shutdown)
	wg.Wait()
	if serveErr != nil && !errors.Is(serveErr, http.ErrServerClosed) {
		return serveErr
	}
	return nil
}

// agentServer is the API's http.Server: headers and idle connections are
// bounded here, request bodies by the handler (o.readTimeout), and
// answers not at all (an apply answers after its reload).
func agentServer(h http.Handler, o agentOptions) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: o.readHeaderTimeout,
		IdleTimeout:       o.idleTimeout,
		ErrorLog:          slog.NewLogLogger(o.log.Handler(), slog.LevelWarn),
	}
}

// superviseHAProxy writes the bootstrap config when the base directory has
// none (never over a tree a, which holds it, has committed) and starts
// HAProxy.
func superviseHAProxy(ctx context.Context, o agentOptions, a *agent.Agent) (*agent.Supervisor, error) {
	written, err := agent.WriteBootstrap(o.cfg.BaseDir, o.cfg.StatsSocket, o.binds)
	if err != nil {
		return nil, err
	}
	if written {
		a.CheckDrift() // the state lists the bootstrap's digest
	}
	return agent.StartSupervisor(ctx, agent.SupervisorConfig{
		Binary:       o.haproxy,
		BaseDir:      o.cfg.BaseDir,
		MasterSocket: o.cfg.MasterSocket,
		StatsSocket:  o.cfg.StatsSocket,
		Output:       o.haproxyOut,
		Log:          o.log,
	})
}

func agentStateCommand() *cli.Command {
	return &cli.Command{
		Name:  "state",
		Usage: "print an agent's state",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "url", Value: "http://127.0.0.1:5555", Usage: "the agent's base URL", EnvVars: []string{"HAPTIC_AGENT_URL"}},
			&cli.StringFlag{Name: "token-file", Usage: "file holding the bearer token", EnvVars: []string{"HAPTIC_TOKEN_FILE"}},
		},
		Action: func(c *cli.Context) error {
			cl := &agentapi.Client{BaseURL: c.String("url")}
			if tf := c.String("token-file"); tf != "" {
				tok, err := agentapi.ReadTokenFile(tf)
				if err != nil {
					return err
				}
				cl.Token = tok
			}
			st, err := cl.State(c.Context)
			if err != nil {
				return err
			}
			printAgentState(c.App.Writer, st)
			return nil
		},
	}
}

// printAgentState writes the state for people, one fact per line.
func printAgentState(w io.Writer, st *agentapi.State) {
	orNone := func(s string) string {
		if s == "" {
			return "(none)"
		}
		return s
	}
	fmt.Fprintf(w, "agent:           %s (api %s)\n", orNone(st.AgentVersion), st.APIVersion)
	fmt.Fprintf(w, "haproxy:         %s, worker pid %d", orNone(st.HAProxyVersion), st.Worker.PID)
	if !st.Worker.StartedAt.IsZero() {
		fmt.Fprintf(w, " since %s", st.Worker.StartedAt.UTC().Format(time.RFC3339))
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "applied plan:    %s\n", orNone(st.AppliedPlanID))
	fmt.Fprintf(w, "last known good: %s\n", orNone(st.LastKnownGoodPlanID))
	fmt.Fprintf(w, "fence:           %d\n", st.Fence)
	fmt.Fprintf(w, "drifted:         %v\n", st.Drifted)
	fmt.Fprintf(w, "files:           %d\n", len(st.Files))
	paths := make([]string, 0, len(st.Files))
	for p := range st.Files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		fmt.Fprintf(w, "  %s  %s\n", st.Files[p], p)
	}
	fmt.Fprintf(w, "pending deletes: %d\n", len(st.PendingDeletes))
	for _, d := range st.PendingDeletes {
		if d.Server != "" {
			fmt.Fprintf(w, "  server %s/%s\n", d.Backend, d.Server)
		} else {
			fmt.Fprintf(w, "  backend %s\n", d.Backend)
		}
	}
	if r := st.LastApply; r != nil {
		result := "ack"
		if !r.OK {
			result = fmt.Sprintf("nack at %s: %s", r.Stage, r.Message)
		}
		fmt.Fprintf(w, "last apply:      plan %s, %s, took %v\n", orNone(r.PlanID), result, r.Took)
		if r.Reload.Performed || r.Reload.Scheduled {
			fmt.Fprintf(w, "  reload: performed=%v scheduled=%v ok=%v reason=%q took=%v\n", r.Reload.Performed, r.Reload.Scheduled, r.Reload.OK, r.Reload.Reason, r.Reload.Took)
		}
		if r.Rollback.Performed {
			fmt.Fprintf(w, "  rollback: ok=%v %s\n", r.Rollback.OK, r.Rollback.Message)
		}
	}
}
