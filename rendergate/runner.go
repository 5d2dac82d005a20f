package rendergate

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/haptic-io/haptic/renderplan"
)

// ErrSuperseded is the error of a [Result] for a submitted plan that was
// never checked because a newer plan was submitted before its turn.
var ErrSuperseded = errors.New("rendergate: superseded by a newer plan before it was checked")

// maxSuperseded bounds the superseded notices a Runner holds while Run is
// not running; older ones are dropped.
const maxSuperseded = 256

// RunnerConfig configures a [Runner].
type RunnerConfig struct {
	// Checker runs the checks. Required.
	Checker renderplan.Checker
	// OnResult receives every result, on the goroutine that calls
	// [Runner.Run], one at a time, in the order the checks ran. It must not
	// call Run; it may call Submit. Required.
	OnResult func(Result)
	// Log receives a debug record per check. Nil discards.
	Log *slog.Logger
	// Spacing is the least time from the end of one check to the start of
	// the next, for outputs submitted with [Runner.Submit]; zero runs them
	// back to back. A check is about 0.1 s of CPU at 3,000 backends, and
	// its memory (some 60 MB) leaves the caches cold for the next
	// reconciliation: under a steady stream of changes, a spacing bounds
	// both, and each check covers the newest output, the ones in between
	// being superseded. A check after a quiet spell starts at once.
	// [Runner.SubmitUrgent] does not wait.
	Spacing time.Duration
}

// Result is the outcome of one submitted plan.
type Result struct {
	PlanID string
	// Output is the checked output, for dispatching it after a pass; nil
	// for a superseded plan, whose output the Runner let go of when a
	// newer one replaced it.
	Output *renderplan.Output
	// Verdict is [VerdictOf](Err).
	Verdict Verdict
	// Err is nil on a pass, a [*CheckError] on a refusal, wraps
	// [ErrSuperseded] for a plan that was not checked, or is the error of a
	// check that could not run.
	Err error
	// Duration is how long the check took (zero when superseded).
	Duration time.Duration
}

// Runner checks submitted outputs one at a time on its own concurrency
// slot: the goroutine that calls [Runner.Run]. Submissions coalesce: while
// a check runs, or the spacing after one (see [RunnerConfig.Spacing]),
// only the newest submitted output waits; each one it replaces gets a
// Result wrapping [ErrSuperseded]. A Runner is safe for
// concurrent use; Run may be running at most once at a time.
type Runner struct {
	checker  renderplan.Checker
	onResult func(Result)
	log      *slog.Logger
	spacing  time.Duration

	running atomic.Bool
	wake    chan struct{} // capacity 1: "pending changed"

	mu         sync.Mutex
	pending    *renderplan.Output // guarded by mu; next output to check
	urgent     bool               // guarded by mu; pending skips the spacing
	rested     time.Time          // guarded by mu; when the spacing after the last check ends
	inflight   string             // guarded by mu; plan ID being checked, "" when idle
	superseded []string           // guarded by mu; plan IDs to report as superseded
}

// NewRunner checks cfg and returns an idle Runner.
func NewRunner(cfg RunnerConfig) (*Runner, error) {
	if cfg.Checker == nil {
		return nil, errors.New("rendergate: RunnerConfig.Checker is nil")
	}
	if cfg.OnResult == nil {
		return nil, errors.New("rendergate: RunnerConfig.OnResult is nil")
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Spacing < 0 {
		return nil, errors.New("rendergate: RunnerConfig.Spacing is negative")
	}
	return &Runner{checker: cfg.Checker, onResult: cfg.OnResult, log: cfg.Log, spacing: cfg.Spacing, wake: make(chan struct{}, 1)}, nil
}

// Submit queues out for checking and returns at once; the check starts
// once the spacing after the last one has passed (see
// [RunnerConfig.Spacing]). It replaces an output that is still waiting
// (which is reported as superseded), unless both have the same plan ID.
// An output whose plan is being checked right now is not queued, since
// its result is coming, but it still supersedes the waiting one: the
// newest plan wins. Outputs without a plan are ignored. Submit may be
// called before Run.
func (r *Runner) Submit(out *renderplan.Output) { r.submit(out, false) }

// SubmitUrgent is [Runner.Submit] for an output that waits for its
// verdict before it is dispatched: its check starts as soon as no other
// check runs, spacing or not. The waiting output stays urgent until it is
// checked, whatever replaces it.
func (r *Runner) SubmitUrgent(out *renderplan.Output) { r.submit(out, true) }

func (r *Runner) submit(out *renderplan.Output, urgent bool) {
	if out == nil || out.Plan == nil {
		return
	}
	id := out.ID()
	r.mu.Lock()
	switch {
	case r.pending != nil && r.pending.ID() == id:
		r.pending = out
	default:
		if r.pending != nil {
			if len(r.superseded) == maxSuperseded {
				r.superseded = r.superseded[1:]
			}
			// Only the ID: an output of a few thousand backends holds
			// megabytes, and a burst supersedes hundreds of them.
			r.superseded = append(r.superseded, r.pending.ID())
		}
		r.pending = out
		if id == r.inflight {
			r.pending = nil // its result is coming
		}
	}
	r.urgent = r.pending != nil && (r.urgent || urgent)
	r.mu.Unlock()
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// Run checks submitted outputs until ctx ends, then returns ctx's error. A
// check interrupted by the end of ctx reports no result, and its output is
// kept to be checked by the next Run. Run returns an error at once if
// another Run is running.
func (r *Runner) Run(ctx context.Context) error {
	if !r.running.CompareAndSwap(false, true) {
		return errors.New("rendergate: Runner.Run is already running")
	}
	defer r.running.Store(false)
	rest := time.NewTimer(time.Hour)
	rest.Stop()
	defer rest.Stop()
	for {
		r.mu.Lock()
		superseded := r.superseded
		r.superseded = nil
		out := r.pending
		var wait time.Duration
		if out != nil && !r.urgent {
			wait = time.Until(r.rested)
		}
		if wait > 0 {
			out = nil // not yet
		} else if out != nil {
			r.pending, r.urgent = nil, false
			r.inflight = out.ID()
		}
		r.mu.Unlock()

		for _, id := range superseded {
			r.onResult(Result{PlanID: id, Err: fmt.Errorf("plan %s: %w", id, ErrSuperseded)})
		}
		if out == nil {
			var rested <-chan time.Time
			if wait > 0 {
				rest.Reset(wait)
				rested = rest.C
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-r.wake:
			case <-rested:
			}
			rest.Stop()
			continue
		}
		res, interrupted := r.check(ctx, out)
		if interrupted {
			r.mu.Lock()
			r.inflight = ""
			if r.pending == nil {
				r.pending = out
			}
			r.mu.Unlock()
			return ctx.Err()
		}
		r.onResult(res)
		// Clear inflight only after the result is delivered, so that a
		// Submit of the same plan from OnResult is not checked twice.
		r.mu.Lock()
		r.inflight = ""
		r.rested = time.Now().Add(r.spacing)
		r.mu.Unlock()
	}
}

// check runs one check. interrupted reports that ctx ended before the
// check reached a verdict.
func (r *Runner) check(ctx context.Context, out *renderplan.Output) (res Result, interrupted bool) {
	if ctx.Err() != nil {
		return Result{}, true
	}
	id := out.ID()
	start := time.Now()
	err := r.checker.Check(ctx, out)
	res = Result{PlanID: id, Output: out, Verdict: VerdictOf(err), Err: err, Duration: time.Since(start)}
	if ctx.Err() != nil && res.Verdict == VerdictUnknown {
		return Result{}, true
	}
	r.log.Debug("rendergate: checked", "plan_id", id, "verdict", res.Verdict.String(), "duration", res.Duration)
	return res, false
}
