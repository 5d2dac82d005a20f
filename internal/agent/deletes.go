package agent

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/haptic-io/haptic/agentapi"
)

// pendingDelete is a server or backend delete waiting until HAProxy can
// remove the object (no connection, no stream, no server left).
type pendingDelete struct {
	op       agentapi.Op
	next     time.Time // earliest next attempt
	attempts int
}

// errQueueFull refuses a delete the bounded queue cannot hold; the apply
// falls back to a reload, which makes every pending delete moot.
var errQueueFull = errors.New("agent: deferred delete queue is full")

// deferDelete queues op (an OpDelServer or OpDelBackend) for the
// background delete loop. The first attempt is due at once: it starts
// with "wait <RemovableWait> srv-removable" (or be-removable), which
// HAProxy answers as soon as the last request on the object ends, so a
// delete usually completes within a request's duration. A plan that adds
// the object back meanwhile costs a reload; the sooner the delete is done,
// the rarer that is.
func (a *Agent) deferDelete(op agentapi.Op) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.pending) >= a.cfg.MaxPendingDeletes {
		return fmt.Errorf("%w (%d)", errQueueFull, a.cfg.MaxPendingDeletes)
	}
	a.pending = append(a.pending, pendingDelete{op: op, next: a.cfg.Now()})
	a.metrics.pending.Set(float64(len(a.pending)))
	select {
	case a.deleteWake <- struct{}{}:
	default:
	}
	return nil
}

// deleteLoop retries the deferred deletes until ctx ends.
func (a *Agent) deleteLoop(ctx context.Context) {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		wait := a.runDeletes(ctx)
		if wait <= 0 {
			wait = time.Hour
		}
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
		timer.Reset(wait)
		select {
		case <-ctx.Done():
			return
		case <-a.deleteWake:
		case <-timer.C:
		}
	}
}

// runDeletes tries every due delete once, in queue order, on the worker
// socket ("wait <RemovableWait> srv-removable" then "del server"; "wait
// be-removable" then "del backend"), and returns how long until the next
// one is due. A backend waits for its servers' deletes. It does not hold
// the apply lock (runtime applies go on meanwhile; the planner does not
// touch objects it knows are pending) but each attempt excludes reloads
// (reloadMu), and an attempt after a reload is dropped with the queue.
func (a *Agent) runDeletes(ctx context.Context) time.Duration {
	a.mu.Lock()
	gen := a.reloadGen
	now := a.cfg.Now()
	var due []pendingDelete
	servers := map[string]bool{}
	var next time.Duration
	for _, d := range a.pending {
		if d.op.Kind == agentapi.OpDelServer {
			servers[d.op.Backend] = true
		}
		if w := d.next.Sub(now); w > 0 {
			if next == 0 || w < next {
				next = w
			}
			continue
		}
		if d.op.Kind == agentapi.OpDelBackend && servers[d.op.Backend] {
			continue
		}
		due = append(due, d)
	}
	a.mu.Unlock()
	for _, d := range due {
		if ctx.Err() != nil {
			return 0
		}
		done, failed, err := a.tryDelete(ctx, d.op, gen)
		if !done {
			return 0
		}
		a.mu.Lock()
		i := a.pendingIndex(d.op)
		switch {
		case i < 0:
		case err != nil:
			a.log.Warn("deferred delete failed; dropped", "target", deleteTarget(d.op), "err", err)
			a.metrics.ops.WithLabelValues(d.op.Kind.String(), "failed").Inc()
			a.pending = append(a.pending[:i], a.pending[i+1:]...)
		case failed:
			a.pending[i].attempts++
			a.pending[i].next = a.cfg.Now().Add(a.cfg.DeleteRetry)
			if next == 0 || a.cfg.DeleteRetry < next {
				next = a.cfg.DeleteRetry
			}
		default:
			a.metrics.ops.WithLabelValues(d.op.Kind.String(), "ok").Inc()
			a.pending = append(a.pending[:i], a.pending[i+1:]...)
			next = time.Millisecond // a backend may be due now
		}
		a.metrics.pending.Set(float64(len(a.pending)))
		a.mu.Unlock()
	}
	return next
}

// tryDelete makes one attempt at a deferred delete. It holds reloadMu for
// reading throughout, so the commands reach the worker generation the
// delete was queued for: done is false when a reload came since gen (the
// new worker never had the object, or serves it again, and must not be
// touched). failed says HAProxy found it not removable yet.
func (a *Agent) tryDelete(ctx context.Context, op agentapi.Op, gen int) (done, failed bool, err error) {
	a.reloadMu.RLock()
	defer a.reloadMu.RUnlock()
	a.mu.Lock()
	stale := a.reloadGen != gen
	a.mu.Unlock()
	if stale {
		return false, false, nil
	}
	cmds, err := Commands(op, CommandEnv{RemovableWait: a.cfg.RemovableWait})
	if err != nil {
		return true, false, err
	}
	results, rerr := a.sock.Run(ctx, cmds...)
	switch {
	case rerr == nil:
		return true, false, nil
	case notRemovableYet(results):
		return true, true, nil
	default:
		return true, false, rerr
	}
}

// pendingIndex finds op in the queue; a.mu must be held.
func (a *Agent) pendingIndex(op agentapi.Op) int {
	for i, d := range a.pending {
		if d.op.Kind == op.Kind && d.op.Backend == op.Backend && d.op.Server == op.Server {
			return i
		}
	}
	return -1
}
