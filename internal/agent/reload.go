package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/haptic-io/haptic/agentapi"
	"github.com/haptic-io/haptic/haproxysock"
)

// reloadWait returns how long the pacing window stays closed; zero means
// a reload may run now.
func (a *Agent) reloadWait() time.Duration {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.cfg.MinReloadInterval <= 0 || a.lastReload.IsZero() {
		return 0
	}
	return max(0, a.lastReload.Add(a.cfg.MinReloadInterval).Sub(a.cfg.Now()))
}

// reloadOwed reports whether a scheduled or recovery reload has not run.
func (a *Agent) reloadOwed() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.reloadDue
}

// reloadAndVerify reloads through the master socket and checks that a new
// worker serves: Success=1, the master's failure counter at zero, and a
// serving worker other than the one before. On failure it returns the
// stage (reload or verify) and an error whose text is HAProxy's: the
// [ALERT] lines of a refused configuration. Either way the old worker
// keeps serving when the new one did not come up.
func (a *Agent) reloadAndVerify(ctx context.Context) (agentapi.ReloadInfo, agentapi.Stage, error) {
	ctx, cancel := context.WithTimeout(ctx, a.cfg.ReloadTimeout)
	defer cancel()
	a.reloadMu.Lock()
	defer a.reloadMu.Unlock()
	info := agentapi.ReloadInfo{Performed: true}
	start := time.Now()
	oldPID := 0
	if before, err := a.master.ShowProc(ctx); err == nil {
		if w, ok := before.Serving(); ok {
			oldPID = w.PID
		}
	}
	_, err := a.master.Reload(ctx)
	a.mu.Lock()
	a.lastReload = a.cfg.Now()
	a.reloadDue, a.reloadReason = false, ""
	a.mu.Unlock()
	info.Took = time.Since(start)
	if err != nil {
		a.metrics.reloads.WithLabelValues("failed").Inc()
		var re *haproxysock.ReloadError
		if errors.As(err, &re) {
			msg := strings.Join(re.Alerts, "\n")
			if msg == "" {
				msg = re.Log
			}
			if msg == "" {
				msg = re.Error()
			}
			return info, agentapi.StageReload, errors.New(msg)
		}
		return info, agentapi.StageReload, err
	}
	procs, err := a.master.ShowProc(ctx)
	info.Took = time.Since(start)
	if err != nil {
		a.metrics.reloads.WithLabelValues("verify_failed").Inc()
		return info, agentapi.StageVerify, fmt.Errorf("verify: %w", err)
	}
	serving, ok := procs.Serving()
	switch {
	case procs.LastReloadFailed():
		err = fmt.Errorf("verify: the master counts %d failed reload(s)", procs.Master.Failed)
	case !ok:
		err = errors.New("verify: show proc lists no worker")
	case serving.PID == oldPID:
		err = fmt.Errorf("verify: no new worker; pid %d still serves", oldPID)
	}
	if err != nil {
		a.metrics.reloads.WithLabelValues("verify_failed").Inc()
		return info, agentapi.StageVerify, err
	}
	a.metrics.reloads.WithLabelValues("ok").Inc()
	info.OK = true
	info.NewWorkerPID = serving.PID
	a.mu.Lock()
	a.reloadGen++
	dropped := len(a.pending)
	a.pending = nil
	a.metrics.pending.Set(0)
	a.mu.Unlock()
	if dropped > 0 {
		a.log.Info("reload dropped pending deletes: the new worker never had those objects", "count", dropped)
	}
	return info, "", nil
}

// runDueReload runs a scheduled or owed reload once the pacing window is
// open and returns how long to wait when it is not yet; zero when nothing
// is due.
func (a *Agent) runDueReload(ctx context.Context) time.Duration {
	if !a.reloadOwed() {
		return 0
	}
	if wait := a.reloadWait(); wait > 0 {
		return wait
	}
	a.applyMu.Lock()
	defer a.applyMu.Unlock()
	if !a.reloadOwed() { // an apply's reload came first
		return 0
	}
	if wait := a.reloadWait(); wait > 0 {
		return wait
	}
	a.mu.Lock()
	reason := a.reloadReason
	a.mu.Unlock()
	info, stage, err := a.reloadAndVerify(ctx)
	info.Reason = "scheduled: " + reason
	a.mu.Lock()
	next := a.durable
	drifted := a.drifted
	a.mu.Unlock()
	if err != nil {
		a.log.Error("scheduled reload failed; the baseline is unknown until a full apply", "stage", stage, "err", err)
		a.loseBaseline()
	} else {
		a.log.Info("scheduled reload done", "plan_id", next.AppliedPlanID, "took", info.Took)
		next.ReloadPending = false
		if _, werr := a.commitStateLocked(next, !drifted, "", nil); werr != nil {
			a.log.Error("write state after the scheduled reload", "err", werr)
		}
	}
	// The outcome shows in the state once everything above is done.
	a.mu.Lock()
	if a.lastApply != nil {
		r := cloneResult(a.lastApply)
		r.Reload = info
		if err != nil {
			r.OK, r.Stage, r.Message = false, stage, err.Error()
		}
		a.lastApply = r
	}
	a.mu.Unlock()
	return 0
}

// settleRecoveryLocked runs the reload a crash recovery owes before an
// apply builds on the tree. applyMu must be held.
func (a *Agent) settleRecoveryLocked(ctx context.Context) {
	a.mu.Lock()
	owed := a.reloadDue && a.reloadReason == reasonRecovery
	a.mu.Unlock()
	if !owed {
		return
	}
	if _, _, err := a.reloadAndVerify(ctx); err != nil {
		a.log.Error("recovery reload failed", "err", err)
		a.loseBaseline()
	}
}
