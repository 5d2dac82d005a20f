package agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"sort"
	"sync"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/haptic-io/haptic/agentapi"
	"github.com/haptic-io/haptic/haproxysock"
	"github.com/haptic-io/haptic/renderplan"
)

// Agent applies plans to one HAProxy: it owns the file tree under
// BaseDir, the journal and last-known-good set under StateDir, and both
// sockets. It implements [agentapi.Applier]. Its methods are safe for
// concurrent use; applies, scheduled reloads and drift checks are
// serialised on one lock (applyMu), and deferred deletes never overlap a
// reload (reloadMu).
type Agent struct {
	cfg     Config
	lock    *dirLock // BaseDir's, held until Close
	base    *os.Root // BaseDir
	state   *os.Root // StateDir
	sock    *haproxysock.Client
	master  *haproxysock.Master
	metrics *metrics
	gather  prometheus.Gatherer
	log     *slog.Logger

	// applyMu serialises everything that touches the tree or HAProxy's
	// runtime state: applies, scheduled reloads, deferred deletes, drift
	// checks and recovery.
	applyMu sync.Mutex
	// treeCache holds the digests of the tree's files by stamp; guarded
	// by applyMu.
	treeCache map[string]stamp
	// bodyCache holds the bodies of the files the last applies wrote
	// (those a patch may apply to), by path; guarded by applyMu.
	bodyCache map[string]cachedBody
	// mark is the ops mark (opsmark.go); guarded by applyMu.
	mark markFile

	// reloadMu keeps reloads and deferred-delete attempts apart: a delete
	// sent after a reload would reach the new worker, which may serve the
	// very server again. Reloads hold it for writing, each deferred delete
	// attempt for reading. Take it after applyMu and before mu.
	reloadMu sync.RWMutex

	// mu guards the fields below; take it after applyMu and reloadMu,
	// never before.
	mu sync.Mutex
	// durable is the committed state (mirrors state.json).
	durable durableState
	// drifted says the tree differs from durable.Manifest.
	drifted bool
	// disk are the tree's digests as hashed when it was found drifted;
	// nil when the tree could not be read. The state reports them in
	// place of durable.Manifest while drifted is set.
	disk manifest
	// baselineUnknown says HAProxy may not run durable.AppliedPlanID (a
	// failed scheduled reload, a failed restore).
	baselineUnknown bool
	// reloadGen counts successful reloads; deferred deletes started
	// before a reload are moot after it.
	reloadGen int
	// lastApply is the last apply's result, its op results cut
	// (stateOps); lastApplyOps counts them uncut.
	lastApply    *agentapi.ApplyResult
	lastApplyOps int
	// lastReload is when the last reload ran.
	lastReload time.Time
	// reloadDue says a reload is scheduled (pacing) or owed (recovery).
	reloadDue bool
	// reloadReason says why.
	reloadReason string
	// pending are the deferred deletes, in order.
	pending []pendingDelete
	// seq numbers transactions.
	seq int

	wake       chan struct{} // pokes Run's reload loop
	deleteWake chan struct{} // pokes the deferred delete loop
}

var _ agentapi.Applier = (*Agent)(nil)
var _ agentapi.ReadyChecker = (*Agent)(nil)

// New checks cfg, locks the tree (BaseDir/.haptic.lock, held until
// Close; a tree another process holds is a *[LockError] naming it), opens
// it and the state directory, and finishes or rolls back an apply a crash
// interrupted (see [Agent.Run] for the reload such a rollback may owe). It
// does not contact HAProxy.
func New(cfg Config) (*Agent, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(cfg.BaseDir, 0o755); err != nil {
		return nil, fmt.Errorf("agent: base dir: %w", err)
	}
	if err := os.MkdirAll(cfg.StateDir, 0o700); err != nil {
		return nil, fmt.Errorf("agent: state dir: %w", err)
	}
	if err := sameFilesystem(cfg.BaseDir, cfg.StateDir); err != nil {
		return nil, fmt.Errorf("agent: %w", err)
	}
	// One agent per tree: recovery and applies assume nobody else writes
	// it.
	lock, err := lockDir(cfg.BaseDir)
	if err != nil {
		return nil, fmt.Errorf("agent: %w", err)
	}
	base, err := os.OpenRoot(cfg.BaseDir)
	if err != nil {
		_ = lock.release()
		return nil, fmt.Errorf("agent: open base dir: %w", err)
	}
	state, err := os.OpenRoot(cfg.StateDir)
	if err != nil {
		_ = base.Close()
		_ = lock.release()
		return nil, fmt.Errorf("agent: open state dir: %w", err)
	}
	a := &Agent{
		cfg:        cfg,
		lock:       lock,
		base:       base,
		state:      state,
		sock:       &haproxysock.Client{Path: cfg.StatsSocket, Timeout: cfg.SocketTimeout, BufSize: cfg.BufSize},
		master:     &haproxysock.Master{Path: cfg.MasterSocket, Timeout: cfg.SocketTimeout, BufSize: cfg.BufSize},
		log:        cfg.Log,
		treeCache:  map[string]stamp{},
		bodyCache:  map[string]cachedBody{},
		wake:       make(chan struct{}, 1),
		deleteWake: make(chan struct{}, 1),
	}
	reg := cfg.Registerer
	if reg == nil {
		r := prometheus.NewRegistry()
		reg, a.gather = r, r
	} else if g, ok := reg.(prometheus.Gatherer); ok {
		a.gather = g
	}
	if a.metrics, err = newMetrics(reg, a.lkgAge); err != nil {
		_ = a.Close()
		return nil, fmt.Errorf("agent: metrics: %w", err)
	}
	if err := a.recover(); err != nil {
		_ = a.Close()
		return nil, fmt.Errorf("agent: recover: %w", err)
	}
	return a, nil
}

// Close releases the directories and the lock of the base directory. It
// does not stop HAProxy.
func (a *Agent) Close() error {
	return errors.Join(a.mark.close(), a.base.Close(), a.state.Close(), a.lock.release())
}

// Gatherer returns the registry the metrics are on when Config.Registerer
// was nil or is also a Gatherer; otherwise nil.
func (a *Agent) Gatherer() prometheus.Gatherer { return a.gather }

func sameFilesystem(a, b string) error {
	var sa, sb syscall.Stat_t
	if err := syscall.Stat(a, &sa); err != nil {
		return fmt.Errorf("stat %s: %w", a, err)
	}
	if err := syscall.Stat(b, &sb); err != nil {
		return fmt.Errorf("stat %s: %w", b, err)
	}
	if sa.Dev != sb.Dev {
		return fmt.Errorf("StateDir %s is not on the filesystem of BaseDir %s", b, a)
	}
	return nil
}

func (a *Agent) lkgAge() float64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.durable.LKGAt.IsZero() {
		return 0
	}
	return a.cfg.Now().Sub(a.durable.LKGAt).Seconds()
}

func (a *Agent) poke() {
	select {
	case a.wake <- struct{}{}:
	default:
	}
}

// State reports the agent's state. HAProxy's version and worker come from
// "show info" on the worker socket; they stay empty while HAProxy does not
// answer.
func (a *Agent) State(ctx context.Context) (*agentapi.State, error) {
	st := &agentapi.State{
		APIVersion:   agentapi.APIVersion,
		AgentVersion: a.cfg.Version,
		OpKinds:      agentapi.OpKinds(),
		BodyPatches:  true,
	}
	if info, err := a.sock.Info(ctx); err == nil {
		st.HAProxyVersion = info.Version
		st.Worker = agentapi.Worker{PID: info.PID, StartedAt: info.StartTime}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	st.Fence = a.durable.NewestToken
	st.LastKnownGoodPlanID = a.durable.LKGPlanID
	st.Drifted = a.drifted
	st.ReloadPending = a.reloadDue
	if !a.drifted && !a.baselineUnknown {
		st.AppliedPlanID = a.durable.AppliedPlanID
	}
	// Files are what the disk holds: a controller sends no body for a
	// file listed here with the digest it wants. The committed manifest
	// is the disk only while the baseline is known.
	files := a.durable.Manifest
	switch {
	case a.drifted:
		files = a.disk
	case a.baselineUnknown:
		files = nil // a failed restore may have left any mix
	}
	st.Files = make(map[string]renderplan.Digest, len(files))
	for p, d := range files {
		st.Files[p] = d
	}
	for _, d := range a.pending {
		st.PendingDeletes = append(st.PendingDeletes, agentapi.PendingDelete{Backend: d.op.Backend, Server: d.op.Server})
	}
	sort.Slice(st.PendingDeletes, func(i, j int) bool {
		x, y := st.PendingDeletes[i], st.PendingDeletes[j]
		if x.Backend != y.Backend {
			return x.Backend < y.Backend
		}
		return x.Server < y.Server
	})
	if a.lastApply != nil {
		r := *a.lastApply
		st.LastApply, st.LastApplyOps = &r, a.lastApplyOps
	}
	return st, nil
}

// stateOps returns the op results [agentapi.State.LastApply] keeps: the
// first MaxStateOpResults and the failed ones after them.
func stateOps(ops []agentapi.OpResult) []agentapi.OpResult {
	if len(ops) <= agentapi.MaxStateOpResults {
		return ops
	}
	kept := slices.Clip(ops[:agentapi.MaxStateOpResults])
	for _, r := range ops[agentapi.MaxStateOpResults:] {
		if !r.OK {
			kept = append(kept, r)
		}
	}
	return kept
}

// Ready reports whether HAProxy's worker socket answers and, with
// Config.ReadyAfterPlan, whether HAProxy runs a plan rather than the
// bootstrap config.
func (a *Agent) Ready(ctx context.Context) error {
	if _, err := a.sock.Info(ctx); err != nil {
		return fmt.Errorf("haproxy worker socket: %w", err)
	}
	if a.cfg.ReadyAfterPlan {
		a.mu.Lock()
		applied := a.durable.AppliedPlanID
		a.mu.Unlock()
		if applied == "" {
			return errors.New("no plan applied yet: HAProxy serves the bootstrap config")
		}
	}
	return nil
}

// Run runs the background loops until ctx ends: the reload a recovery
// owes, scheduled (paced) reloads, deferred deletes and drift checks. It
// returns ctx's error once its goroutines have stopped.
func (a *Agent) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	if a.cfg.DriftInterval > 0 {
		wg.Go(func() { a.driftLoop(ctx) })
	}
	wg.Go(func() { a.deleteLoop(ctx) })
	a.poke()
	retry := time.NewTimer(time.Hour)
	defer retry.Stop()
	for {
		select {
		case <-ctx.Done():
			wg.Wait()
			return ctx.Err()
		case <-a.wake:
		case <-retry.C:
		}
		next := a.tick(ctx)
		if !retry.Stop() {
			select {
			case <-retry.C:
			default:
			}
		}
		retry.Reset(next)
	}
}

// tick runs a due reload and returns how long to sleep before the next
// check.
func (a *Agent) tick(ctx context.Context) time.Duration {
	if wait := a.runDueReload(ctx); wait > 0 {
		return wait
	}
	return time.Hour
}
