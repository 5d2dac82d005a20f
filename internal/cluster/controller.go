package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/haptic-io/haptic/agentapi"
	"github.com/haptic-io/haptic/api/v1alpha1"
	"github.com/haptic-io/haptic/internal/controller"
	"github.com/haptic-io/haptic/rendergate"
	"github.com/haptic-io/haptic/renderplan"
	"github.com/haptic-io/haptic/templating"
)

// Config configures [Run].
type Config struct {
	// REST reaches the apiserver (in-cluster or a kubeconfig). Required.
	REST *rest.Config
	// Namespace and Name name the HAProxyTemplateConfig. Required.
	Namespace, Name string
	// Identity is this replica's name (the pod name) for leader election.
	// Required.
	Identity string
	// HAProxy is the haproxy binary of the gates (haproxy -c). Required.
	HAProxy string
	// ScratchDir holds the gates' check trees; empty means os.TempDir().
	ScratchDir string
	// CheckAs is the user the gates' haproxy -c runs as (the templates
	// are user code: never with the controller's credentials); nil means
	// rendergate's default (nobody when running as root).
	CheckAs *rendergate.User
	// CheckerSocket, when set, is the Unix socket of a `haptic checker`
	// (a [rendergate.CheckServer]) that runs every haproxy -c instead of
	// this process: in another container, without this process's
	// service-account token. HAProxy, ScratchDir and CheckAs then go
	// unused.
	CheckerSocket string
	// AgentToken, when set, is the agents' bearer token (a mounted
	// Secret); otherwise the config's agent.tokenSecretRef is read.
	AgentToken agentapi.Token
	// LeaderElection: only the holder of the Lease LeaseName dispatches,
	// gates and writes status. False makes this replica lead alone with
	// term 1 (one replica, tests).
	LeaderElection bool
	// LeaseName is the Lease's name; empty means "haptic-" + Name.
	LeaseName string
	// LeaseDuration, RenewDeadline, RetryPeriod: see [LeaderConfig].
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
	// Listen serves /healthz, /readyz and /metrics; empty serves none.
	Listen string
	// PprofListen serves /debug/pprof; it must be a loopback address
	// (profiles show the objects and templates), empty serves none.
	PprofListen string
	// Debounce and CheckSpacing are the loop's (controller.Config).
	Debounce     controller.DebounceConfig
	CheckSpacing time.Duration
	// Webhook is the validating admission webhook this replica serves
	// (every replica, leader or not); its zero value serves none.
	Webhook WebhookConfig
	// Log; nil discards.
	Log *slog.Logger
	// Registry receives the metrics; nil means a new one.
	Registry *prometheus.Registry
	// Fleet is the shape of the HAProxy fleet provisioned for each
	// Gateway in gateway mode (a config whose libraries include
	// "gateway").
	Fleet FleetConfig
	// GatewayControllerName is the GatewayClass controllerName served in
	// gateway mode; empty means gatewayapi.ControllerName.
	GatewayControllerName string
}

// Run runs HAPTIC's controller in a cluster until ctx ends: it watches
// its HAProxyTemplateConfig, passes each new generation through the
// config-load gate (compile, validation tests, haproxy -c of the tests'
// renders), runs the controller loop on informers with the HAProxy pods
// as targets, and, while it leads, dispatches and writes the config's
// status. A refused generation leaves the last good one serving.
func Run(ctx context.Context, cfg Config) error {
	c, err := newController(cfg)
	if err != nil {
		return err
	}
	return c.run(ctx)
}

type ctrl struct {
	cfg     Config
	log     *slog.Logger
	kube    kubernetes.Interface
	dyn     dynamic.Interface
	checker renderplan.Checker // a *rendergate.HAProxyChecker, or a *rendergate.RemoteChecker with CheckerSocket
	reg     *prometheus.Registry
	// watchEvents counts informer notifications across pipelines.
	watchEvents *prometheus.CounterVec

	leading atomic.Bool
	term    atomic.Uint64
	status  *statusWriter

	mu   sync.Mutex
	pipe *pipeline        // guarded by mu; the running loop, nil before the first good config
	gw   *gatewayPipeline // guarded by mu; the running loops of gateway mode, nil otherwise
	good *Settings        // guarded by mu; the generation it runs
}

func newController(cfg Config) (*ctrl, error) {
	switch {
	case cfg.REST == nil:
		return nil, errors.New("controller: missing REST config")
	case cfg.Namespace == "" || cfg.Name == "":
		return nil, errors.New("controller: missing config Namespace or Name")
	case cfg.Identity == "":
		return nil, errors.New("controller: missing Identity")
	case cfg.HAProxy == "":
		return nil, errors.New("controller: missing HAProxy binary")
	}
	if err := cfg.Webhook.check(); err != nil {
		return nil, fmt.Errorf("controller: %w", err)
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Registry == nil {
		cfg.Registry = prometheus.NewRegistry()
	}
	if cfg.LeaseName == "" {
		cfg.LeaseName = "haptic-" + cfg.Name
	}
	kube, err := kubernetes.NewForConfig(cfg.REST)
	if err != nil {
		return nil, fmt.Errorf("controller: %w", err)
	}
	dyn, err := dynamic.NewForConfig(cfg.REST)
	if err != nil {
		return nil, fmt.Errorf("controller: %w", err)
	}
	checker, err := newChecker(cfg, "gate")
	if err != nil {
		return nil, fmt.Errorf("controller: %w", err)
	}
	c := &ctrl{cfg: cfg, log: cfg.Log, kube: kube, dyn: dyn, checker: checker, reg: cfg.Registry, watchEvents: NewWatchEventsCounter(cfg.Registry)}
	c.status = &statusWriter{dyn: dyn, namespace: cfg.Namespace, name: cfg.Name, log: cfg.Log}
	return c, nil
}

func (c *ctrl) run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	errs := make(chan error, 4)

	if c.cfg.Listen != "" {
		stop, err := serve(c.cfg.Listen, c.mux())
		if err != nil {
			return err
		}
		defer stop()
	}
	if c.cfg.Webhook.Listen != "" {
		stop, err := c.startWebhook(ctx, &wg)
		if err != nil {
			return err
		}
		defer stop()
	}
	if c.cfg.PprofListen != "" {
		stop, err := servePprof(c.cfg.PprofListen)
		if err != nil {
			return err
		}
		defer stop()
	}
	if c.cfg.LeaderElection {
		wg.Go(func() {
			err := RunLeader(ctx, LeaderConfig{
				Client: c.kube, Namespace: c.cfg.Namespace, Name: c.cfg.LeaseName, Identity: c.cfg.Identity,
				LeaseDuration: c.cfg.LeaseDuration, RenewDeadline: c.cfg.RenewDeadline, RetryPeriod: c.cfg.RetryPeriod,
				OnLead: c.lead, OnLose: c.lose, Log: c.log,
				Owner: c.configOwner,
			})
			if ctx.Err() == nil {
				errs <- err
			}
		})
	} else {
		c.lead(ctx, 1)
	}
	pub := &publisher{kube: c.kube, dyn: c.dyn, namespace: c.cfg.Namespace, name: c.cfg.Name, log: c.log, m: newPublishMetrics(c.reg)}
	wg.Go(func() {
		c.status.run(ctx, c.pipeline, c.gateways, c.leading.Load, pub)
		pub.close()
	})
	configs := make(chan configObject, 1)
	wg.Go(func() {
		if err := watchConfig(ctx, c.dyn, c.cfg.Namespace, c.cfg.Name, configs); err != nil && ctx.Err() == nil {
			errs <- err
		}
	})
	for {
		select {
		case <-ctx.Done():
			c.stopPipeline()
			return nil
		case err := <-errs:
			c.stopPipeline()
			return err
		case obj := <-configs:
			c.accept(ctx, obj)
		}
	}
}

// lead starts a term: the fence rises and the loop dispatches.
func (c *ctrl) lead(_ context.Context, term uint64) {
	c.term.Store(term)
	c.leading.Store(true)
	c.mu.Lock()
	p, gw := c.pipe, c.gw
	c.mu.Unlock()
	if p != nil {
		p.loop.SetFence(term)
		p.loop.Trigger()
	}
	if gw != nil {
		gw.lead(term)
	}
	c.status.trigger()
}

// lose ends a term: the loop keeps rendering and sends nothing.
func (c *ctrl) lose() {
	c.leading.Store(false)
}

// accept runs one generation of the config through the config-load gate
// and, when it passes, into the loop.
func (c *ctrl) accept(ctx context.Context, obj configObject) {
	log := c.log.With("config", c.cfg.Namespace+"/"+c.cfg.Name, "generation", obj.generation)
	s, engine, err := c.gate(ctx, obj)
	if err != nil {
		log.Error("config refused: the last good config keeps serving", "error", err)
		c.status.setValidated(obj.generation, false, refusalReason(err), err.Error())
		return
	}
	c.status.setValidated(obj.generation, true, v1alpha1.ReasonValidationPassed, fmt.Sprintf("%d validation tests passed", len(s.Templates.ValidationTests)))
	c.mu.Lock()
	p, gw, good := c.pipe, c.gw, c.good
	c.mu.Unlock()
	if s.Gateway {
		c.acceptGateway(ctx, log, obj, s, gw, good)
		return
	}
	if p != nil && s.sameWatch(good) {
		p.loop.SetEngine(engine)
		p.setSettings(s)
		c.mu.Lock()
		c.good = s
		c.mu.Unlock()
		log.Info("config accepted: new templates")
		return
	}
	c.stopPipeline()
	np, err := c.startPipeline(ctx, s, engine)
	if err != nil {
		log.Error("config accepted, but the loop did not start", "error", err)
		c.status.setReady(obj.generation, false, "StartFailed", err.Error())
		return
	}
	c.mu.Lock()
	c.pipe, c.good = np, s
	c.mu.Unlock()
	log.Info("config accepted: watching", "resources", len(s.Watches))
}

// acceptGateway runs a generation in gateway mode: one with the same
// watches gets new engines in the running loops, any other starts the
// gateway pipeline anew.
func (c *ctrl) acceptGateway(ctx context.Context, log *slog.Logger, obj configObject, s *Settings, gw *gatewayPipeline, good *Settings) {
	if gw != nil && s.sameWatch(good) {
		if err := gw.setSettings(s); err != nil {
			log.Error("config accepted, but a gateway loop's engine did not compile", "error", err)
		}
		c.mu.Lock()
		c.good = s
		c.mu.Unlock()
		log.Info("config accepted: new templates")
		return
	}
	c.stopPipeline()
	ng, err := c.startGatewayPipeline(ctx, s)
	if err != nil {
		log.Error("config accepted, but gateway mode did not start", "error", err)
		c.status.setReady(obj.generation, false, "StartFailed", err.Error())
		return
	}
	c.mu.Lock()
	c.gw, c.good = ng, s
	c.mu.Unlock()
	log.Info("config accepted: gateway mode, watching", "resources", len(s.Watches))
}

// gateways returns the running gateway pipeline, nil outside gateway
// mode.
func (c *ctrl) gateways() *gatewayPipeline {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gw
}

// gate is the config-load gate: the generation parses, compiles and
// passes its validation tests, haproxy_valid assertions included.
func (c *ctrl) gate(ctx context.Context, obj configObject) (*Settings, *templating.Engine, error) {
	return c.gateWith(ctx, obj, c.checker)
}

// gateWith is the gate with checker running haproxy -c.
func (c *ctrl) gateWith(ctx context.Context, obj configObject, checker renderplan.Checker) (*Settings, *templating.Engine, error) {
	s, err := ParseSpec(obj.spec, c.cfg.Namespace, obj.generation)
	if err != nil {
		return nil, nil, err
	}
	engine, err := templating.Compile(s.Templates)
	if err != nil {
		return nil, nil, err
	}
	if _, err := templating.RunTests(ctx, engine, templating.TestOptions{Checker: checker}); err != nil {
		return nil, nil, &testsError{err: err}
	}
	return s, engine, nil
}

// pipeline returns the running pipeline, nil before the first good
// config.
func (c *ctrl) pipeline() *pipeline {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.pipe
}

// testsError is a generation refused by its validation tests (haproxy -c
// included), as opposed to one that does not parse or compile.
type testsError struct{ err error }

func (e *testsError) Error() string { return "validation tests: " + e.err.Error() }
func (e *testsError) Unwrap() error { return e.err }

// refusalReason is the Validated reason of a refused generation.
func refusalReason(err error) string {
	var te *testsError
	if errors.As(err, &te) {
		return v1alpha1.ReasonValidationFailed
	}
	return v1alpha1.ReasonConfigInvalid
}

func (c *ctrl) stopPipeline() {
	c.mu.Lock()
	p, gw := c.pipe, c.gw
	c.pipe, c.gw = nil, nil
	c.mu.Unlock()
	if p != nil {
		p.stop()
	}
	if gw != nil {
		gw.stop()
	}
}

// token returns the agents' bearer token for s.
func (c *ctrl) token(ctx context.Context, s *Settings) (agentapi.Token, error) {
	if c.cfg.AgentToken != "" || s.TokenSecret == "" {
		return c.cfg.AgentToken, nil
	}
	sec, err := c.kube.CoreV1().Secrets(s.PodNamespace).Get(ctx, s.TokenSecret, metav1.GetOptions{})
	if err != nil {
		return "", fmt.Errorf("agent token: %w", err)
	}
	v, ok := sec.Data[s.TokenKey]
	if !ok {
		return "", fmt.Errorf("agent token: secret %s/%s has no key %q", s.PodNamespace, s.TokenSecret, s.TokenKey)
	}
	return agentapi.Token(strings.TrimSpace(string(v))), nil
}

// ready: the loop listed the world and, while leading, every pod runs
// its last plan.
func (c *ctrl) ready() (bool, string) {
	c.mu.Lock()
	p, gw := c.pipe, c.gw
	c.mu.Unlock()
	if gw != nil {
		if !gw.initialized() {
			return false, "informers not synced"
		}
		if !c.leading.Load() {
			return true, "following"
		}
		return true, "leading"
	}
	if p == nil {
		return false, "no accepted config"
	}
	st := p.loop.Status()
	if !st.Initialized {
		return false, "informers not synced"
	}
	if !c.leading.Load() {
		return true, "following"
	}
	if st.PlanID == "" || st.Reconciliations == 0 {
		return false, "no plan rendered"
	}
	return true, "leading"
}

func (c *ctrl) mux() *http.ServeMux {
	_ = c.reg.Register(collectors.NewGoCollector())
	_ = c.reg.Register(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	mux := http.NewServeMux()
	// In gateway mode each Gateway's loop has a registry of its own (its
	// metrics carry a gateway label), gathered with the controller's.
	loops := prometheus.GathererFunc(func() ([]*dto.MetricFamily, error) {
		if gw := c.gateways(); gw != nil {
			return gw.gather()
		}
		return nil, nil
	})
	mux.Handle("GET /metrics", promhttp.HandlerFor(prometheus.Gatherers{c.reg, loops}, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok\n")) })
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		ok, why := c.ready()
		if !ok {
			http.Error(w, why, http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte(why + "\n"))
	})
	return mux
}

// servePprof serves net/http/pprof on a loopback address only.
func servePprof(addr string) (func(), error) {
	host, _, err := net.SplitHostPort(addr)
	ip := net.ParseIP(host)
	if err != nil || (host != "localhost" && (ip == nil || !ip.IsLoopback())) {
		return nil, fmt.Errorf("controller: pprof address %q: want a loopback address (127.0.0.1:port)", addr)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return serve(addr, mux)
}

// serve serves h on addr until the returned stop is called.
func serve(addr string, h http.Handler) (func(), error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("controller: listen: %w", err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second, IdleTimeout: 60 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(l)
	}()
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		<-done
	}, nil
}

// newChecker is the checker of lane ("gate", "webhook"): the checker
// process's when cfg has a CheckerSocket, else one of this process.
func newChecker(cfg Config, lane string) (renderplan.Checker, error) {
	if cfg.CheckerSocket != "" {
		return rendergate.NewRemoteChecker(cfg.CheckerSocket, lane), nil
	}
	return rendergate.NewHAProxyChecker(rendergate.Config{Binary: cfg.HAProxy, ScratchDir: cfg.ScratchDir, RunAs: cfg.CheckAs,
		Interactive: lane == rendergate.LaneWebhook, Log: cfg.Log.With("component", lane)})
}

// configOwner is the owner reference of the HAProxyTemplateConfig: what
// the controller makes for it (the Lease) goes when it goes.
func (c *ctrl) configOwner(ctx context.Context) (metav1.OwnerReference, error) {
	u, err := c.dyn.Resource(ConfigResource).Namespace(c.cfg.Namespace).Get(ctx, c.cfg.Name, metav1.GetOptions{})
	if err != nil {
		return metav1.OwnerReference{}, fmt.Errorf("get config %s/%s: %w", c.cfg.Namespace, c.cfg.Name, err)
	}
	return metav1.OwnerReference{APIVersion: v1alpha1.GroupVersion.String(), Kind: v1alpha1.KindHAProxyTemplateConfig, Name: u.GetName(), UID: u.GetUID()}, nil
}
