package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/haptic-io/haptic/agentapi"
	"github.com/haptic-io/haptic/api/v1alpha1"
	"github.com/haptic-io/haptic/gatewayapi"
	"github.com/haptic-io/haptic/internal/controller"
	"github.com/haptic-io/haptic/store"
	"github.com/haptic-io/haptic/templating"
)

// GatewayLibrary is the stock library whose presence in a config's
// libraries turns on gateway mode.
const GatewayLibrary = "gateway"

// gatewayPipeline is gateway mode: one informer [Source] shared, through
// a [fanout], by one controller loop per Gateway of our GatewayClasses.
// Each loop renders its Gateway's routing model (extraContext key
// "gateway") and deploys it to that Gateway's own HAProxy fleet, which
// the leader provisions (a Deployment, a Service and the agents' token
// Secret in the Gateway's namespace, owned by the Gateway). A manager
// goroutine keeps a store of its own, builds the model on every change,
// starts and stops the loops as Gateways come and go and, while leading,
// provisions the fleets and writes every Gateway API status.
type gatewayPipeline struct {
	c     *ctrl
	src   *Source
	fan   *fanout
	token agentapi.Token
	opts  gatewayapi.Options
	// cache is the manager's Build cache (each loop has its own).
	cache  *gatewayapi.Cache
	config string // LabelFleetConfig
	status *apiStatusWriter
	cancel context.CancelFunc
	done   chan struct{}
	kick   chan struct{} // capacity 1: publish soon
	// newTerm is set by lead and taken by the manager: what was written
	// in an earlier term is written again where it differs.
	newTerm atomic.Bool

	mu       sync.Mutex
	settings *Settings                       // guarded by mu
	loops    map[gatewayapi.Ref]*gatewayLoop // guarded by mu
	model    *gatewayapi.Model               // guarded by mu; the last built, nil before the listing

	// Owned by the manager goroutine:
	provisioned map[gatewayapi.Ref]string // fleet objects applied this term, by digest
	cleaned     string                    // the Gateway set the stale fleets were last removed for
}

// gatewayLoop is the loop of one Gateway and its fleet's pods.
type gatewayLoop struct {
	ref    gatewayapi.Ref
	loop   *controller.Loop
	pods   *Pods
	reg    *prometheus.Registry
	cancel context.CancelFunc
	done   chan struct{}
}

func (c *ctrl) startGatewayPipeline(ctx context.Context, s *Settings) (*gatewayPipeline, error) {
	token, err := c.token(ctx, s)
	if err != nil {
		return nil, err
	}
	if token == "" {
		return nil, errors.New("gateway mode: the fleets' agents need a token: set agent.tokenSecretRef or --agent-token-file")
	}
	src, err := NewSource(SourceConfig{Client: c.dyn, Watches: s.Watches, Log: c.log, Events: c.watchEvents})
	if err != nil {
		return nil, err
	}
	g := &gatewayPipeline{
		c: c, src: src, token: token,
		opts:        gatewayapi.Options{ControllerName: c.cfg.GatewayControllerName},
		cache:       &gatewayapi.Cache{},
		config:      configLabel(c.cfg.Namespace, c.cfg.Name),
		done:        make(chan struct{}),
		kick:        make(chan struct{}, 1),
		settings:    s,
		loops:       map[gatewayapi.Ref]*gatewayLoop{},
		provisioned: map[gatewayapi.Ref]string{},
	}
	if g.opts.ControllerName == "" {
		g.opts.ControllerName = gatewayapi.ControllerName
	}
	g.status = &apiStatusWriter{dyn: c.dyn, log: c.log, controllerName: g.opts.ControllerName, now: time.Now}
	g.fan = newFanout(src, nil)
	ctx, g.cancel = context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := g.fan.Run(ctx); err != nil && ctx.Err() == nil {
			c.log.Error("informer source stopped", "error", err)
		}
	})
	wg.Go(func() { g.run(ctx) })
	go func() {
		wg.Wait()
		close(g.done)
	}()
	return g, nil
}

func (g *gatewayPipeline) stop() {
	g.cancel()
	<-g.done
}

func (g *gatewayPipeline) trigger() {
	select {
	case g.kick <- struct{}{}:
	default:
	}
}

func (g *gatewayPipeline) current() *Settings {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.settings
}

// setSettings takes a generation with the same watches: every loop gets
// an engine compiled from its templates.
func (g *gatewayPipeline) setSettings(s *Settings) error {
	g.mu.Lock()
	g.settings = s
	loops := slices.Collect(maps.Values(g.loops))
	g.mu.Unlock()
	var errs []error
	for _, gl := range loops {
		e, err := templating.Compile(s.Templates)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		gl.loop.SetEngine(e)
	}
	g.trigger()
	return errors.Join(errs...)
}

// lead raises every loop's fence and has the manager publish anew.
func (g *gatewayPipeline) lead(term uint64) {
	g.newTerm.Store(true)
	for _, gl := range g.loopList() {
		gl.loop.SetFence(term)
		gl.loop.Trigger()
	}
	g.trigger()
}

func (g *gatewayPipeline) loopList() []*gatewayLoop {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Collect(maps.Values(g.loops))
}

func (g *gatewayPipeline) loopOf(ref gatewayapi.Ref) *gatewayLoop {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.loops[ref]
}

// run is the manager: it keeps its store, rebuilds the model on every
// change, starts and stops loops, and publishes.
func (g *gatewayPipeline) run(ctx context.Context) {
	defer func() {
		for _, gl := range g.loopList() {
			gl.stop()
		}
	}()
	s := g.current()
	st, err := store.NewMemory(s.Templates.WatchedResources)
	if err != nil {
		g.c.log.Error("gateway mode: store", "error", err)
		return
	}
	quiet := quietStatus(s.Watches)
	events := make(chan controller.Event, 64)
	sub := g.fan.Subscribe()
	subDone := make(chan struct{})
	go func() {
		defer close(subDone)
		_ = sub.Run(ctx, events)
	}()
	defer func() { <-subDone }()
	tick := time.NewTicker(statusRefresh)
	defer tick.Stop()
	drift := time.NewTimer(g.driftInterval())
	defer drift.Stop()
	var (
		initialized bool
		// rebuild and publish are what the next round owes; it runs
		// at once unless the manager is resting (see managerRest).
		rebuild, publish bool
		next             time.Time
		rest             = time.NewTimer(time.Hour)
		resting          bool
	)
	rest.Stop()
	defer rest.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case ev := <-events:
			for more := true; more; {
				init, changed := g.apply(st, quiet, ev)
				initialized = initialized || init
				rebuild = rebuild || changed
				select {
				case ev = <-events:
				default:
					more = false
				}
			}
		case <-g.kick:
			publish = true
		case <-rest.C:
			resting = false
		case <-tick.C:
			publish = true
			// A pod waiting for a scheduled reload is read again, so that
			// its Gateway turns Programmed once the reload ran.
			for _, gl := range g.loopList() {
				if len(gl.loop.Status().ReloadPending) > 0 {
					gl.loop.Trigger()
				}
			}
		case <-drift.C:
			// Re-dispatch: an agent whose tree drifted gets the full state.
			for _, gl := range g.loopList() {
				gl.loop.Trigger()
			}
			drift.Reset(g.driftInterval())
		}
		if !initialized || (!rebuild && !publish) || resting {
			continue
		}
		if wait := time.Until(next); wait > 0 {
			rest.Reset(wait)
			resting = true
			continue
		}
		start := time.Now()
		if rebuild {
			g.rebuild(ctx, st)
		}
		g.publish(ctx)
		rebuild, publish = false, false
		next = time.Now().Add(managerRest(time.Since(start)))
	}
}

// managerRest is how long the gateway manager waits, after a round
// that lasted took, before it starts the next: changes that arrive
// meanwhile share one round. The loops serve routes without the
// manager; what waits is the statuses and the fleets, by a tenth of a
// second or twice the round, so that under a stream of changes at
// thousands of routes the manager takes at most a third of a core from
// the loops. The first change after a quiet spell is handled at once.
func managerRest(took time.Duration) time.Duration {
	return max(100*time.Millisecond, 2*took)
}

func (g *gatewayPipeline) driftInterval() time.Duration {
	if d := g.current().DriftPreventionInterval; d > 0 {
		return d
	}
	return DefaultDriftPreventionInterval
}

// apply applies one event to the manager's store and reports whether it
// ended the listing and whether the model may have changed: an update
// of nothing but a status (ours, mostly, coming back) changes no model.
func (g *gatewayPipeline) apply(st *store.Memory, quiet []string, ev controller.Event) (initialized, changed bool) {
	for _, c := range ev.Changes {
		var err error
		if c.Object == nil {
			err = st.Delete(c.Alias, c.Namespace, c.Name)
			changed = true
		} else {
			changed = changed || !controller.StatusEcho(st, quiet, c)
			err = st.Update(c.Alias, c.Object)
		}
		if err != nil {
			g.c.log.Warn("gateway mode: store refused a change", "change", c.String(), "error", err)
		}
	}
	return ev.Initialized, changed || ev.Initialized
}

// rebuild builds the model and makes the loops match its Gateways.
func (g *gatewayPipeline) rebuild(ctx context.Context, st *store.Memory) {
	// The manager provisions and writes statuses: no render context.
	opts := g.opts
	opts.Cache, opts.StatusOnly = g.cache, true
	m := gatewayapi.Build(st.Snapshot(), opts)
	want := m.Gateways()
	g.mu.Lock()
	g.model = m
	var gone []*gatewayLoop
	for ref, gl := range g.loops {
		if !slices.Contains(want, ref) {
			gone = append(gone, gl)
			delete(g.loops, ref)
		}
	}
	var missing []gatewayapi.Ref
	for _, ref := range want {
		if g.loops[ref] == nil {
			missing = append(missing, ref)
		}
	}
	s := g.settings
	g.mu.Unlock()
	for _, gl := range gone {
		g.c.log.Info("gateway gone: its loop stops", "gateway", gl.ref.String())
		gl.stop()
	}
	for _, ref := range missing {
		gl, err := g.startLoop(ctx, ref, s)
		if err != nil {
			g.c.log.Error("gateway loop did not start", "gateway", ref.String(), "error", err)
			continue
		}
		g.mu.Lock()
		g.loops[ref] = gl
		g.mu.Unlock()
		g.c.log.Info("gateway: loop started", "gateway", ref.String(), "fleet", fleetName(ref))
	}
}

func (g *gatewayPipeline) startLoop(ctx context.Context, ref gatewayapi.Ref, s *Settings) (*gatewayLoop, error) {
	engine, err := templating.Compile(s.Templates)
	if err != nil {
		return nil, err
	}
	gl := &gatewayLoop{ref: ref, reg: prometheus.NewRegistry(), done: make(chan struct{})}
	f := newFleet(ref, "", g.config, nil, FleetConfig{}, 0, "", nil)
	pods, err := NewPods(PodsConfig{
		Client: g.c.kube, Namespace: ref.Namespace, Selector: f.podSelector(), Port: s.AgentPort,
		Token: func() agentapi.Token { return g.token },
		Changed: func() {
			if gl.loop != nil {
				gl.loop.Trigger()
			}
			g.trigger()
		},
	})
	if err != nil {
		return nil, err
	}
	gl.pods = pods
	// Each loop's Builds share a cache of their own: its store is its
	// own, and a Build reuses what the previous one resolved. They build
	// the render context of the loop's Gateway alone: every loop builds
	// on every change, and one context each keeps that linear in the
	// number of Gateways.
	opts := g.opts
	opts.Cache, opts.RenderGateway = &gatewayapi.Cache{}, ref
	loop, err := controller.New(controller.Config{
		Source:      g.fan.Subscribe(),
		QuietStatus: quietStatus(s.Watches),
		Engine:      engine,
		Targets: func() []controller.Target {
			if !g.c.leading.Load() {
				return nil
			}
			return pods.Targets()
		},
		Active:       g.c.leading.Load,
		Fence:        g.c.term.Load(),
		Checker:      g.c.checker,
		CheckSpacing: g.c.cfg.CheckSpacing,
		Debounce:     g.c.cfg.Debounce,
		Log:          g.c.log.With("gateway", ref.String()),
		Registerer:   prometheus.WrapRegistererWith(prometheus.Labels{"gateway": ref.String()}, gl.reg),
		RenderInput: func(snap templating.Store) controller.RenderInput {
			m := gatewayapi.Build(snap, opts)
			gen, _ := m.Gateway(ref)
			return controller.RenderInput{ExtraContext: map[string]any{"gateway": m.RenderContext(ref)}, Tag: gen}
		},
		Dispatched: g.trigger,
	})
	if err != nil {
		return nil, err
	}
	gl.loop = loop
	ctx, gl.cancel = context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := pods.Run(ctx); err != nil && ctx.Err() == nil {
			g.c.log.Error("pod discovery stopped", "gateway", ref.String(), "error", err)
		}
	})
	wg.Go(func() {
		if err := loop.Run(ctx); err != nil && ctx.Err() == nil {
			g.c.log.Error("controller loop stopped", "gateway", ref.String(), "error", err)
		}
	})
	go func() {
		wg.Wait()
		close(gl.done)
	}()
	return gl, nil
}

func (gl *gatewayLoop) stop() {
	gl.cancel()
	<-gl.done
}

// publish provisions the fleets and writes the statuses, while leading.
func (g *gatewayPipeline) publish(ctx context.Context) {
	if !g.c.leading.Load() {
		return
	}
	if g.newTerm.Swap(false) {
		g.status.reset()
		clear(g.provisioned)
		g.cleaned = ""
	}
	g.mu.Lock()
	m := g.model
	s := g.settings
	g.mu.Unlock()
	if m == nil {
		return
	}
	g.provision(ctx, m, s)
	if _, failures := g.status.write(ctx, m.Statuses(g.fleetOf), g.fan); failures > 0 {
		g.trigger() // try again at the next tick
	}
}

// fleetOf is what the data plane of ref runs.
func (g *gatewayPipeline) fleetOf(ref gatewayapi.Ref) gatewayapi.Fleet {
	gl := g.loopOf(ref)
	if gl == nil {
		return gatewayapi.Fleet{Message: "the HAProxy fleet is starting"}
	}
	ready := gl.pods.Ready()
	addrs := g.serviceAddresses(ref)
	if len(addrs) == 0 {
		addrs = slices.Sorted(maps.Values(ready))
		addrs = slices.Compact(addrs)
	}
	name := fleetName(ref)
	if len(ready) == 0 {
		return gatewayapi.Fleet{Addresses: addrs, Message: fmt.Sprintf("no Ready HAProxy pod in fleet %s yet", name)}
	}
	st := gl.loop.Status()
	gen := int64(math.MaxInt64)
	var behind []string
	for _, pod := range slices.Sorted(maps.Keys(ready)) {
		id := st.Pods[pod]
		if st.ReloadPending[pod] {
			// Acknowledged, but HAProxy serves it only after the reload
			// the agent's pacing scheduled: not programmed yet.
			behind = append(behind, pod+" (reload scheduled)")
			gen = 0
			continue
		}
		tag, ok := gl.loop.PlanTag(id)
		pg, _ := tag.(int64)
		if id == "" || !ok || pg == 0 {
			behind = append(behind, pod)
			gen = 0
			continue
		}
		gen = min(gen, pg)
	}
	f := gatewayapi.Fleet{Addresses: addrs, ProgrammedGeneration: gen}
	if len(behind) > 0 {
		f.ProgrammedGeneration = 0
		f.Message = fmt.Sprintf("HAProxy pods of fleet %s not yet running a plan of this Gateway: %s", name, strings.Join(behind, ", "))
	} else if cur, ok := g.generation(ref); ok && gen < cur {
		f.Message = fmt.Sprintf("the HAProxy pods of fleet %s run generation %d; waiting for %d", name, gen, cur)
	}
	return f
}

func (g *gatewayPipeline) generation(ref gatewayapi.Ref) (int64, bool) {
	g.mu.Lock()
	m := g.model
	g.mu.Unlock()
	if m == nil {
		return 0, false
	}
	return m.Gateway(ref)
}

// serviceAddresses are the load-balancer ingress addresses of ref's
// fleet Service, when the services watch lists it.
func (g *gatewayPipeline) serviceAddresses(ref gatewayapi.Ref) []string {
	svc := g.fan.Object("services", ref.Namespace, fleetName(ref))
	if svc == nil {
		return nil
	}
	ing, _, _ := unstructured.NestedSlice(svc, "status", "loadBalancer", "ingress")
	var out []string
	for _, i := range ing {
		m, _ := i.(map[string]any)
		if ip, _ := m["ip"].(string); ip != "" {
			out = append(out, ip)
		} else if h, _ := m["hostname"].(string); h != "" {
			out = append(out, h)
		}
	}
	return out
}

// provision applies the fleet of every Gateway whose objects changed
// since this term applied them, and removes the fleets of Gateways no
// longer served.
func (g *gatewayPipeline) provision(ctx context.Context, m *gatewayapi.Model, s *Settings) {
	refs := m.Gateways()
	for _, ref := range refs {
		gw := g.fan.Object("gateways", ref.Namespace, ref.Name)
		if gw == nil {
			continue
		}
		uid := types.UID((&unstructured.Unstructured{Object: gw}).GetUID())
		f := newFleet(ref, uid, g.config, s.PodLabels, g.c.cfg.Fleet, int32(s.AgentPort), string(g.token), m.Listeners(ref))
		f.minReload = s.MinDeploymentInterval
		f.infraLabels, f.infraAnnotations = infrastructure(gw)
		d := fleetDigest(f)
		if g.provisioned[ref] == d {
			continue
		}
		if err := g.applyFleet(ctx, f); err != nil {
			g.c.log.Warn("provision the HAProxy fleet", "gateway", ref.String(), "fleet", f.String(), "error", err)
			continue
		}
		g.provisioned[ref] = d
		g.c.log.Info("HAProxy fleet applied", "gateway", ref.String(), "fleet", f.String(), "listeners", len(f.listeners))
	}
	for ref := range g.provisioned {
		if !slices.Contains(refs, ref) {
			delete(g.provisioned, ref)
		}
	}
	set := fmt.Sprint(refs)
	if set != g.cleaned {
		if err := g.removeStaleFleets(ctx, refs); err != nil {
			g.c.log.Warn("remove the fleets of Gateways no longer served", "error", err)
			return
		}
		g.cleaned = set
	}
}

func fleetDigest(f *fleet) string {
	b, err := json.Marshal([]any{f.secret(), f.service(), f.deployment()})
	if err != nil {
		return ""
	}
	return string(b)
}

// applyFleet applies the Secret, the Service (deleted when no listener
// has a port) and the Deployment, in that order: the pods mount the
// Secret.
func (g *gatewayPipeline) applyFleet(ctx context.Context, f *fleet) error {
	opts := metav1.ApplyOptions{FieldManager: FieldManager, Force: true}
	core := g.c.kube.CoreV1()
	if _, err := core.Secrets(f.gw.Namespace).Apply(ctx, f.secret(), opts); err != nil {
		return fmt.Errorf("secret: %w", err)
	}
	if svc := f.service(); svc != nil {
		if _, err := core.Services(f.gw.Namespace).Apply(ctx, svc, opts); err != nil {
			return fmt.Errorf("service: %w", err)
		}
	} else if err := core.Services(f.gw.Namespace).Delete(ctx, f.name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("service: %w", err)
	}
	if _, err := g.c.kube.AppsV1().Deployments(f.gw.Namespace).Apply(ctx, f.deployment(), opts); err != nil {
		return fmt.Errorf("deployment: %w", err)
	}
	return nil
}

// removeStaleFleets deletes this config's fleet objects whose Gateway is
// not among refs (a Gateway that left our classes; a deleted Gateway's
// fleet goes with it through the owner references).
func (g *gatewayPipeline) removeStaleFleets(ctx context.Context, refs []gatewayapi.Ref) error {
	sel := labels.SelectorFromSet(map[string]string{labelManagedBy: fleetManagedBy, labelComponent: fleetComponent, LabelFleetConfig: g.config}).String()
	list := metav1.ListOptions{LabelSelector: sel}
	keep := map[string]bool{}
	for _, r := range refs {
		keep[r.String()] = true
	}
	stale := func(md metav1.ObjectMeta) bool { return !keep[md.Annotations[AnnotationFleetGateway]] }
	var errs []error
	del := func(kind, ns, name string, f func() error) {
		if err := f(); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("delete %s %s/%s: %w", kind, ns, name, err))
			return
		}
		g.c.log.Info("removed the fleet object of a Gateway no longer served", "kind", kind, "object", ns+"/"+name)
	}
	bg := metav1.DeletePropagationBackground
	dopts := metav1.DeleteOptions{PropagationPolicy: &bg}
	deps, err := g.c.kube.AppsV1().Deployments(metav1.NamespaceAll).List(ctx, list)
	if err != nil {
		return err
	}
	for _, d := range deps.Items {
		if stale(d.ObjectMeta) {
			del("Deployment", d.Namespace, d.Name, func() error { return g.c.kube.AppsV1().Deployments(d.Namespace).Delete(ctx, d.Name, dopts) })
		}
	}
	svcs, err := g.c.kube.CoreV1().Services(metav1.NamespaceAll).List(ctx, list)
	if err != nil {
		return err
	}
	for _, s := range svcs.Items {
		if stale(s.ObjectMeta) {
			del("Service", s.Namespace, s.Name, func() error { return g.c.kube.CoreV1().Services(s.Namespace).Delete(ctx, s.Name, dopts) })
		}
	}
	secs, err := g.c.kube.CoreV1().Secrets(metav1.NamespaceAll).List(ctx, list)
	if err != nil {
		return err
	}
	for _, s := range secs.Items {
		if stale(s.ObjectMeta) && s.Type == corev1.SecretTypeOpaque {
			del("Secret", s.Namespace, s.Name, func() error { return g.c.kube.CoreV1().Secrets(s.Namespace).Delete(ctx, s.Name, dopts) })
		}
	}
	return errors.Join(errs...)
}

// initialized: the informers listed the world.
func (g *gatewayPipeline) initialized() bool { return g.fan.Initialized() }

// readiness is the config's Ready condition in gateway mode: every
// Gateway's pods run its loop's last plan.
func (g *gatewayPipeline) readiness() (ok bool, reason, msg string) {
	if !g.initialized() {
		return false, "Syncing", "waiting for the informers' first listing"
	}
	loops := g.loopList()
	if len(loops) == 0 {
		return true, v1alpha1.ReasonDeployed, "no Gateway of our GatewayClasses to serve"
	}
	slices.SortFunc(loops, func(a, b *gatewayLoop) int { return cmpString(a.ref.String(), b.ref.String()) })
	var noPods, deploying, failed []string
	for _, gl := range loops {
		st := gl.loop.Status()
		switch {
		case len(st.Pods) == 0:
			noPods = append(noPods, gl.ref.String())
		case st.LastError != nil && !allOn(st):
			failed = append(failed, gl.ref.String()+": "+st.LastError.Error())
		case !allOn(st):
			deploying = append(deploying, gl.ref.String())
		}
	}
	switch {
	case len(failed) > 0:
		return false, v1alpha1.ReasonDeployFailed, strings.Join(failed, "; ")
	case len(noPods) > 0:
		return false, v1alpha1.ReasonNoPods, "no HAProxy pod yet for Gateways " + strings.Join(noPods, ", ")
	case len(deploying) > 0:
		return false, v1alpha1.ReasonDeploying, "HAProxy pods not yet on the last plan of Gateways " + strings.Join(deploying, ", ")
	}
	return true, v1alpha1.ReasonDeployed, fmt.Sprintf("the HAProxy pods of %d Gateways run their plans", len(loops))
}

func allOn(st controller.Status) bool {
	for _, id := range st.Pods {
		if id != st.PlanID {
			return false
		}
	}
	return st.PlanID != ""
}

// gather gathers the loops' metrics, each labelled with its gateway.
func (g *gatewayPipeline) gather() ([]*dto.MetricFamily, error) {
	var gs prometheus.Gatherers
	for _, gl := range g.loopList() {
		gs = append(gs, gl.reg)
	}
	return gs.Gather()
}
