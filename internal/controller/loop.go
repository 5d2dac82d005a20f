package controller

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/haptic-io/haptic/agentapi"
	"github.com/haptic-io/haptic/deployplan"
	"github.com/haptic-io/haptic/rendergate"
	"github.com/haptic-io/haptic/renderplan"
	"github.com/haptic-io/haptic/store"
	"github.com/haptic-io/haptic/templating"
)

// maxLoggedReasons bounds the reasons of one apply log line.
const maxLoggedReasons = 5

// eventQueue is how many source events wait while a reconciliation runs:
// the follow-up takes them all at once, so a storm's changes reach the
// store in a few large batches rather than one queue's worth at a time.
const eventQueue = 1024

// Retry backoff after a failed dispatch: doubling from retryFirst to
// retryLast, reset by a dispatch that succeeds everywhere.
const (
	retryFirst = 200 * time.Millisecond
	retryLast  = 30 * time.Second
)

// DefaultCheckSpacing is the CLI's [Config].CheckSpacing: a refused plan
// under a steady stream of changes is found within about a second plus
// a check, and checks take at most about a tenth of a core at 3,000
// backends.
const DefaultCheckSpacing = time.Second

// Config configures a [Loop]. Zero optional fields take the documented
// defaults.
type Config struct {
	// Source delivers the objects. Required.
	Source Source
	// QuietStatus names the aliases whose .status HAPTIC writes itself
	// (Ingresses, the Gateway API kinds). An update of such an object
	// that changes nothing but its .status and resourceVersion is filed
	// in the store without a reconciliation of its own: each status
	// write would otherwise cost a render that changes nothing. A
	// template that reads those statuses sees them at the next render.
	QuietStatus []string
	// Engine renders them. Required; [Loop.SetEngine] swaps it.
	Engine *templating.Engine
	// Targets returns the pods to deploy to, asked at every
	// reconciliation (local mode: one; Kubernetes: the discovered pods).
	// Required.
	Targets func() []Target
	// Checker validates rendered outputs in the background (the render
	// gate). Nil means no validation: every plan is dispatched at once. A
	// Checker that is also a [rendergate.Pauser] is paused for the length
	// of each reconciliation, so that a check never delays a change on
	// its way to the pods.
	Checker renderplan.Checker
	// CheckSpacing is the least time between two background checks
	// ([rendergate.RunnerConfig.Spacing]): under a stream of changes the
	// check covers the newest plan, at most one per spacing. A plan held
	// for validate-before-dispatch is checked at once regardless. Zero
	// checks every plan as soon as the last check ends; local mode passes
	// [DefaultCheckSpacing].
	CheckSpacing time.Duration
	// Debounce coalesces changes. The zero value holds no isolated
	// change: it coalesces the changes that arrive while a reconciliation
	// runs and spaces reconciliations only under a storm (see
	// [DebounceConfig]).
	Debounce DebounceConfig
	// Fence is the controller's fencing token sent with every apply (in
	// Kubernetes, the leader's term; [Loop.SetFence] raises it). Zero
	// means 1.
	Fence uint64
	// Active reports whether this loop may validate and dispatch (in
	// Kubernetes: whether it leads). An inactive loop keeps its store and
	// renders, so that it serves at once when it becomes active; it sends
	// nothing. Nil means always active. Call [Loop.Trigger] when it
	// changes.
	Active func() bool
	// MaxOps bounds the runtime ops of one apply; zero means
	// deployplan.DefaultMaxOps.
	MaxOps int
	// Log receives one line per apply and every problem; nil discards.
	Log *slog.Logger
	// Registerer receives the loop's metrics; nil means a private
	// registry.
	Registerer prometheus.Registerer
	// Now is the clock of the debounce; nil means time.Now.
	Now func() time.Time
	// IdleGC runs the garbage collector right after a reconciliation,
	// when the next reconciliation would likely start a collection
	// itself: the mark phase then starts while nothing waits, not in the
	// middle of a render and an apply. It changes mostly when
	// collections run: they come somewhat more often (about 1.4× at
	// 3,000 routes), the heap's peak is lower. For a process whose main
	// job is the loop (haptic local, the controller); it runs
	// runtime.GC, which is process-wide.
	IdleGC bool
	// RenderInput, when set, is called before each render with the
	// snapshot the render reads: its ExtraContext overrides the config's
	// for that render, and its Tag is kept with the plan ID ([Loop.PlanTag]).
	// It lets one loop render one slice of a shared world (in Kubernetes,
	// one Gateway). It runs on the loop's goroutine and must not keep snap.
	RenderInput func(snap templating.Store) RenderInput
	// Dispatched, when set, is called after each dispatch (and revert)
	// ended, on the loop's goroutine: a caller that reports what the pods
	// run ([Loop.Status].Pods) looks again. It must not block.
	Dispatched func()
	// IdleRelease is how long the loop must idle after a
	// reconciliation before it collects and returns the heap's free
	// memory to the system (once per quiet spell): a burst of changes
	// leaves the heap up to twice its live size, and without this the
	// process keeps that until the next burst. Zero means
	// [DefaultIdleRelease], negative never.
	IdleRelease time.Duration
}

// Loop is the controller loop: source → store → debounce → render →
// gate → per-pod diff → apply. [Loop.Run] runs it; the other methods are
// safe to call from any goroutine while it runs.
type Loop struct {
	cfg      Config
	store    *store.Memory
	deb      *debouncer
	gate     *rendergate.Gate
	runner   *rendergate.Runner // nil without a Checker
	pauser   rendergate.Pauser  // the Checker, when it is one
	disp     *dispatcher
	m        *metrics
	log      *slog.Logger
	kick     chan struct{} // capacity 1: "reconcile, something outside the store changed"
	verdicts chan rendergate.Result
	idleGC   *idleCollector // nil without Config.IdleGC and IdleRelease
	tags     planTags

	mu     sync.Mutex
	engine *templating.Engine // guarded by mu
	status Status             // guarded by mu
	held   *renderplan.Output // guarded by mu; a plan waiting for its verdict (latched gate)
	heldID string             // guarded by mu; its plan ID

	// Owned by the Run goroutine. The outputs on their way through the
	// gate are the runner's (its verdict hands each back): the loop keeps
	// none of them, since under a stream of changes most are superseded
	// and each holds megabytes at a few thousand backends.
	passed     *renderplan.Output // the newest output that passed the gate
	passedID   string             // its plan ID
	failing    bool               // the last dispatch failed for some pod: retry
	renderedID string             // the plan ID the last reconciliation rendered
}

// Status is what the loop last did, for people and tests.
type Status struct {
	// Initialized: the source delivered its initial listing.
	Initialized bool
	// Reconciliations counts the reconciliations run.
	Reconciliations int
	// PlanID is the last rendered plan.
	PlanID string
	// Problems are the object problems of the last render.
	Problems []templating.Problem
	// LastError is the last render, source, gate or dispatch error, nil
	// once a later reconciliation succeeded everywhere.
	LastError error
	// GateLatched: a plan was refused and new plans wait for validation.
	GateLatched bool
	// Refused is the ID of the last refused plan and Reason why.
	Refused, RefusedReason string
	// Pods maps each pod to the plan it runs, as last seen.
	Pods map[string]string
	// ReloadPending holds the pods whose plan in Pods waits for a reload
	// the agent scheduled (reload pacing): HAProxy does not serve it yet.
	// A reconciliation reads the pods' states again ([Loop.Trigger]).
	ReloadPending map[string]bool
	// SourceProblems counts problems with the input.
	SourceProblems int
}

// New checks cfg and returns a loop.
func New(cfg Config) (*Loop, error) {
	var errs []error
	if cfg.Source == nil {
		errs = append(errs, errors.New("missing Source"))
	}
	if cfg.Engine == nil {
		errs = append(errs, errors.New("missing Engine"))
	}
	if cfg.Targets == nil {
		errs = append(errs, errors.New("missing Targets"))
	}
	deb, err := newDebouncer(cfg.Debounce)
	if err != nil {
		errs = append(errs, err)
	}
	if cfg.MaxOps < 0 {
		errs = append(errs, fmt.Errorf("negative MaxOps %d", cfg.MaxOps))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("controller config: %w", err)
	}
	if cfg.Fence == 0 {
		cfg.Fence = 1
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Registerer == nil {
		cfg.Registerer = prometheus.NewRegistry()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.IdleRelease == 0 {
		cfg.IdleRelease = DefaultIdleRelease
	}
	st, err := store.NewMemory(cfg.Engine.Config().WatchedResources)
	if err != nil {
		return nil, fmt.Errorf("controller: %w", err)
	}
	m, err := newMetrics(cfg.Registerer)
	if err != nil {
		return nil, err
	}
	gate, err := rendergate.NewGate(rendergate.GateConfig{})
	if err != nil {
		return nil, err
	}
	l := &Loop{
		cfg:      cfg,
		store:    st,
		deb:      deb,
		gate:     gate,
		disp:     newDispatcher(cfg.Fence, cfg.MaxOps, cfg.Log, m),
		m:        m,
		log:      cfg.Log,
		kick:     make(chan struct{}, 1),
		verdicts: make(chan rendergate.Result, 16),
		engine:   cfg.Engine,
	}
	if cfg.IdleGC || cfg.IdleRelease > 0 {
		l.idleGC = &idleCollector{collectAfter: cfg.IdleGC, quiet: collectQuiet}
	}
	if p, ok := cfg.Checker.(rendergate.Pauser); ok {
		l.pauser = p
	}
	if cfg.Checker != nil {
		l.runner, err = rendergate.NewRunner(rendergate.RunnerConfig{Checker: cfg.Checker, OnResult: l.onVerdict, Log: cfg.Log, Spacing: cfg.CheckSpacing})
		if err != nil {
			return nil, err
		}
	}
	return l, nil
}

// SetEngine swaps the engine (a changed template config) and asks for a
// reconciliation. The new engine must watch the same resources.
func (l *Loop) SetEngine(e *templating.Engine) {
	l.mu.Lock()
	l.engine = e
	l.mu.Unlock()
	l.Trigger()
}

// SetFence sets the fencing token of the applies from now on. A new
// leader raises it, so that the agents refuse the late applies of a
// deposed one.
func (l *Loop) SetFence(token uint64) { l.disp.fence.Store(token) }

// Trigger asks for a reconciliation although no object changed (new
// pods, a new engine). It never blocks.
func (l *Loop) Trigger() {
	select {
	case l.kick <- struct{}{}:
	default:
	}
}

// Status returns a copy of the loop's status.
func (l *Loop) Status() Status {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.status
	s.Problems = append([]templating.Problem(nil), s.Problems...)
	s.Pods = l.disp.podStates()
	s.ReloadPending = l.disp.reloadPending()
	s.GateLatched = l.gate.Latched()
	return s
}

func (l *Loop) setStatus(f func(*Status)) {
	l.mu.Lock()
	f(&l.status)
	l.mu.Unlock()
}

// onVerdict is the gate runner's callback: it hands the verdict to the
// loop goroutine.
func (l *Loop) onVerdict(res rendergate.Result) {
	l.verdicts <- res // buffered; Run drains it until the runner has stopped
}

// Run runs the loop until ctx ends, then waits for the source and the
// gate runner and returns ctx's error; it returns earlier with the
// source's error if the source fails. Run must be called once.
func (l *Loop) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	if l.idleGC != nil {
		defer l.idleGC.wait()
	}

	events := make(chan Event, eventQueue)
	srcDone := make(chan error, 1)
	wg.Go(func() { srcDone <- l.cfg.Source.Run(ctx, events) })
	runnerDone := make(chan struct{})
	if l.runner != nil {
		wg.Go(func() {
			defer close(runnerDone)
			_ = l.runner.Run(ctx) // returns ctx's error
		})
		// Keep draining verdicts until the runner stopped, so its callback
		// never blocks the shutdown.
		defer func() {
			cancel()
			for {
				select {
				case <-l.verdicts:
				case <-runnerDone:
					return
				}
			}
		}()
	}

	// The debounce's timer: a follow-up or a held change is due.
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	var timerC <-chan time.Time
	initialized := false

	// A failed dispatch is retried (through the gate: a refused plan is
	// not sent again) with a doubling backoff.
	retry := time.NewTimer(time.Hour)
	retry.Stop()
	defer retry.Stop()
	var retryC <-chan time.Time
	var backoff time.Duration

	// The quiet spell after a reconciliation that releases memory (see
	// Config.IdleRelease).
	quiet := time.NewTimer(time.Hour)
	quiet.Stop()
	defer quiet.Stop()
	var quietC <-chan time.Time
	armRetry := func() {
		if !l.failing {
			backoff, retryC = 0, nil
			retry.Stop()
			return
		}
		if retryC != nil {
			return
		}
		backoff = min(max(2*backoff, retryFirst), retryLast)
		retry.Reset(backoff)
		retryC = retry.C
		l.log.Info("dispatch failed: retrying", "after", backoff)
	}

	// take applies one event and reports whether it asks for a
	// reconciliation.
	take := func(ev Event) bool {
		if !l.applyEvent(ev) && (!ev.Initialized || initialized) {
			return false
		}
		if ev.Initialized && !initialized {
			initialized = true
			l.setStatus(func(s *Status) { s.Initialized = true })
		}
		return initialized
	}
	// schedule arms the timer for the pending changes, if any; a
	// follow-up due now fires at once, through the select, so that
	// shutdown, verdicts and retries are never starved.
	schedule := func() {
		w, ok := l.deb.wait(l.cfg.Now())
		if !ok {
			timer.Stop()
			timerC = nil
			return
		}
		timer.Reset(w)
		timerC = timer.C
	}
	// run reconciles, then takes what arrived meanwhile: those changes
	// were queued while it ran and are coalesced into one follow-up.
	run := func() {
		timer.Stop()
		timerC = nil
		l.deb.begin(l.cfg.Now())
		before := l.renderedID
		l.reconcile(ctx)
		// A reconciliation that rendered the plan of the last one (a
		// drift re-dispatch, a retry, new pods) leaves a quiet spell
		// running: its own garbage is returned with the spell's release.
		fresh := l.renderedID != before
		for range cap(events) + 1 { // at most what the queue held, and a kick
			select {
			case ev := <-events:
				if take(ev) {
					l.deb.change(l.cfg.Now())
				}
				continue
			case <-l.kick:
				if initialized {
					l.deb.change(l.cfg.Now())
				}
				continue
			default:
			}
			break
		}
		l.deb.end()
		armRetry()
		schedule()
		if l.idleGC != nil && l.cfg.IdleRelease > 0 && (fresh || quietC == nil) {
			quiet.Reset(l.cfg.IdleRelease)
			quietC = quiet.C
		}
	}
	// changed records a change seen while no reconciliation runs: an
	// isolated one is reconciled at once.
	changed := func() {
		if !initialized {
			return
		}
		l.deb.change(l.cfg.Now())
		if w, ok := l.deb.wait(l.cfg.Now()); ok && w == 0 {
			run()
			return
		}
		schedule()
	}
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case err := <-srcDone:
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if err == nil {
				err = errors.New("stopped")
			}
			return fmt.Errorf("controller: source: %w", err)
		case ev := <-events:
			if take(ev) {
				changed()
			}
		case <-l.kick:
			changed()
		case <-timerC:
			timerC = nil
			if w, ok := l.deb.wait(l.cfg.Now()); ok && w == 0 {
				run()
				continue
			}
			schedule()
		case <-retryC:
			retryC = nil
			run()
		case res := <-l.verdicts:
			l.handleVerdict(ctx, res)
			armRetry()
		case <-quietC:
			quietC = nil
			l.idleGC.idle()
		}
	}
}

// applyEvent applies one source event to the store and reports whether
// the store changed.
func (l *Loop) applyEvent(ev Event) bool {
	if ev.Err != nil {
		l.m.sourceProblems.Inc()
		l.log.Error("source problem: the objects concerned keep their last good version", "origin", ev.Origin, "error", ev.Err)
		l.setStatus(func(s *Status) { s.SourceProblems++; s.LastError = ev.Err })
	}
	changed := false
	for _, c := range ev.Changes {
		var err error
		quiet := StatusEcho(l.store, l.cfg.QuietStatus, c)
		if c.Object == nil {
			err = l.store.Delete(c.Alias, c.Namespace, c.Name)
		} else {
			err = l.store.Update(c.Alias, c.Object)
		}
		if err != nil {
			l.m.sourceProblems.Inc()
			l.log.Error("store refused a change", "origin", ev.Origin, "change", c.String(), "error", err)
			continue
		}
		changed = changed || !quiet
	}
	return changed
}

// reconcile renders the current objects, asks the gate and dispatches.
func (l *Loop) reconcile(ctx context.Context) {
	if l.pauser != nil {
		l.pauser.Pause()
		defer l.pauser.Resume()
	}
	if l.idleGC != nil {
		l.idleGC.begin()
		defer l.idleGC.end()
	}
	start := l.cfg.Now()
	l.m.reconciliations.Inc()
	l.mu.Lock()
	engine := l.engine
	l.mu.Unlock()
	// After the dispatch, before the check resumes: the next render then
	// walks compact memory (see templating.Engine.Compact).
	defer engine.Compact()

	// The pods' states are read while the templates render.
	targets := l.cfg.Targets()
	states := l.disp.prefetch(ctx, targets)
	t0 := time.Now()
	snap := l.store.Snapshot()
	opts, tag := l.renderInput(snap)
	out, problems, err := engine.Render(ctx, snap, opts)
	renderTook := time.Since(t0)
	pre := states()
	l.m.renderDuration.Observe(renderTook.Seconds())
	if err != nil && ctx.Err() != nil {
		l.log.Debug("render interrupted by shutdown", "error", err)
		return
	}
	if err != nil {
		l.m.reconcileErrors.WithLabelValues("render").Inc()
		l.log.Error("render failed: nothing dispatched, HAProxy keeps serving the last plan", "stage", "render", "error", err)
		l.setStatus(func(s *Status) { s.Reconciliations++; s.LastError = fmt.Errorf("render: %w", err) })
		l.failing = false // the same objects render the same error: nothing to retry
		return
	}
	l.m.renderProblems.Set(float64(len(problems)))
	for i, p := range problems {
		if i == maxLoggedReasons {
			l.log.Warn("more object problems", "count", len(problems)-i)
			break
		}
		l.log.Warn("object problem: left out of the configuration", "problem", p.String())
	}
	// The plan ID may still be computing in the background: the diffs,
	// which need the plan alone, run meanwhile.
	l.disp.diffAhead(out, pre)
	id := out.ID()
	l.renderedID = id
	if l.cfg.RenderInput != nil {
		l.tags.set(id, tag)
	}
	l.setStatus(func(s *Status) { s.Reconciliations++; s.PlanID = id; s.Problems = problems })
	if l.cfg.Active != nil && !l.cfg.Active() {
		l.log.Debug("not active: rendered, nothing dispatched", "plan_id", id)
		l.failing = false
		return
	}

	adm := l.gate.Admit(id)
	if !adm.Dispatch {
		if adm.Validate && l.runner != nil {
			l.validate(out, true)
			l.mu.Lock()
			l.held, l.heldID = out, id
			l.mu.Unlock()
		}
		l.log.Info("plan held by the gate", "plan_id", id, "stage", "gate", "reason", adm.Reason)
		l.failing = false // the verdict decides what happens next
		return
	}
	l.deploy(ctx, targets, out, id, pre, start, renderTook)
	// Optimistic: the check starts after the dispatch, so that haproxy -c
	// does not compete with the apply for the CPU.
	if adm.Validate && l.runner != nil {
		l.validate(out, false)
	}
}

// validate hands out to the gate's runner, whose verdict brings it back
// (the revert target after a pass); a held output (urgent) is checked
// without waiting for the spacing.
func (l *Loop) validate(out *renderplan.Output, urgent bool) {
	if urgent {
		l.runner.SubmitUrgent(out)
	} else {
		l.runner.Submit(out)
	}
}

// deploy dispatches out and logs one line per pod.
func (l *Loop) deploy(ctx context.Context, targets []Target, out *renderplan.Output, id string, pre map[string]prefetched, start time.Time, renderTook time.Duration) {
	results, err := l.disp.dispatch(ctx, targets, out, id, pre)
	total := l.cfg.Now().Sub(start)
	l.m.reconcileDuration.Observe(total.Seconds())
	if ctx.Err() != nil {
		l.log.Debug("dispatch interrupted by shutdown", "plan_id", id)
		return
	}
	for _, r := range results {
		l.logResult(r, renderTook, total)
	}
	l.failing = err != nil
	if err != nil {
		l.m.reconcileErrors.WithLabelValues("dispatch").Inc()
	}
	l.setStatus(func(s *Status) {
		if err != nil {
			s.LastError = err
		} else if s.LastError != nil && s.Refused == "" {
			s.LastError = nil
		}
	})
	l.dispatched()
}

func (l *Loop) dispatched() {
	if l.cfg.Dispatched != nil {
		l.cfg.Dispatched()
	}
}

// logResult writes the one line of an apply.
func (l *Loop) logResult(r PodResult, renderTook, total time.Duration) {
	if r.Skipped {
		l.log.Debug("pod already runs the plan", "pod", r.Pod, "plan_id", r.PlanID)
		return
	}
	attrs := []any{
		"pod", r.Pod, "plan_id", r.PlanID, "mode", string(r.Mode), "verdict", string(r.Verdict), "ops", r.Ops,
		"reload", r.Reloaded, "reasons", reasonsText(r.Reasons),
		"render", renderTook.Round(time.Microsecond), "state", r.StateTook.Round(time.Microsecond),
		"diff", r.DiffTook.Round(time.Microsecond), "apply", r.ApplyTook.Round(time.Microsecond),
		"total", total.Round(time.Microsecond),
	}
	if r.Result != nil && len(r.Result.Timings) > 0 {
		attrs = append(attrs, "agent", timingsText(r.Result.Timings))
	}
	if r.FullState {
		attrs = append(attrs, "full_state", true)
	}
	if r.Err != nil {
		l.log.Error("apply failed: the pod keeps serving its previous set", append(attrs, "stage", failureStage(r.Err), "error", r.Err)...)
		return
	}
	l.log.Info("apply", attrs...)
}

// timingsText gives the agent's stage timings in the order of
// [agentapi.Stages] ("fence=31µs files=612µs swap=… ops=1.104ms …").
func timingsText(ts map[agentapi.Stage]time.Duration) string {
	var b strings.Builder
	for _, st := range agentapi.Stages() {
		d, ok := ts[st]
		if !ok {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%s=%v", st, d.Round(time.Microsecond))
	}
	return b.String()
}

// reasonsText joins the first reasons of a decision.
func reasonsText(rs []deployplan.Reason) string {
	var b strings.Builder
	for i, r := range rs {
		if i == maxLoggedReasons {
			fmt.Fprintf(&b, "; +%d more", len(rs)-i)
			break
		}
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(r.String())
	}
	return b.String()
}

// handleVerdict records a gate verdict: a refusal reverts the pods that
// run the refused plan; a pass releases a held plan.
func (l *Loop) handleVerdict(ctx context.Context, res rendergate.Result) {
	out := res.Output
	if errors.Is(res.Err, rendergate.ErrSuperseded) {
		return
	}
	l.m.gateVerdicts.WithLabelValues(res.Verdict.String()).Inc()
	var pods []rendergate.PodState
	for pod, id := range l.disp.podStates() {
		pods = append(pods, rendergate.PodState{Pod: pod, AppliedPlanID: id})
	}
	reverts := l.gate.Record(res.PlanID, res.Verdict, pods)
	if l.gate.Latched() {
		l.m.gateLatched.Set(1)
	} else {
		l.m.gateLatched.Set(0)
	}
	switch res.Verdict {
	case rendergate.VerdictRefused:
		reason := res.Err.Error()
		var ce *rendergate.CheckError
		if errors.As(res.Err, &ce) {
			reason = ce.Reason
		}
		l.log.Error("gate refused the plan: reverting the pods that run it, validating before dispatch until a plan passes",
			"plan_id", res.PlanID, "stage", "gate", "reason", reason, "reverts", len(reverts))
		l.setStatus(func(s *Status) { s.Refused, s.RefusedReason, s.LastError = res.PlanID, reason, res.Err })
		if len(reverts) > 0 {
			pods := make([]string, len(reverts))
			for i, r := range reverts {
				pods[i] = r.Pod
			}
			results, _ := l.disp.revert(ctx, l.cfg.Targets(), pods, res.PlanID, l.passed, l.passedID)
			for _, r := range results {
				l.logResult(r, 0, r.ApplyTook)
			}
			l.dispatched()
		}
	case rendergate.VerdictPass:
		l.log.Debug("gate passed the plan", "plan_id", res.PlanID, "took", res.Duration)
		if out != nil {
			l.passed, l.passedID = out, res.PlanID
		}
		l.mu.Lock()
		held := l.held
		if held != nil && l.heldID == res.PlanID {
			l.held, l.heldID = nil, ""
		} else {
			held = nil
		}
		l.mu.Unlock()
		l.setStatus(func(s *Status) {
			if s.Refused != "" {
				s.Refused, s.RefusedReason, s.LastError = "", "", nil
			}
		})
		if held != nil {
			l.log.Info("held plan passed the gate: dispatching", "plan_id", res.PlanID)
			l.deploy(ctx, l.cfg.Targets(), held, res.PlanID, nil, l.cfg.Now(), 0)
		}
	default:
		l.log.Warn("gate could not check the plan: not held against it", "plan_id", res.PlanID, "error", res.Err)
	}
}
