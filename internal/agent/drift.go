package agent

import (
	"context"
	"time"
)

// driftLoop re-hashes the tree every DriftInterval until ctx ends.
func (a *Agent) driftLoop(ctx context.Context) {
	t := time.NewTicker(a.cfg.DriftInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			a.CheckDrift()
		}
	}
}

// CheckDrift hashes the tree now and compares it with the applied
// manifest. A mismatch (a file changed, added or removed behind the
// agent's back, or a tree that cannot be read) makes the baseline unknown:
// the state reports Drifted, no applied plan and the digests of the files
// as they are on disk, so the controller sends the full state with a
// reload and the bodies the disk lacks, which repairs the tree. It returns whether
// the tree has drifted. Before the first apply there is nothing to drift
// from.
func (a *Agent) CheckDrift() bool {
	a.applyMu.Lock()
	defer a.applyMu.Unlock()
	a.mu.Lock()
	want := a.durable.Manifest
	applied := a.durable.AppliedPlanID
	was := a.drifted
	a.mu.Unlock()
	if applied == "" {
		return false
	}
	got, err := hashTree(a.base)
	drifted := err != nil || !got.equal(want)
	if drifted && !was {
		a.metrics.drift.Inc()
		attrs := []any{"plan_id", applied}
		if err != nil {
			attrs = append(attrs, "err", err)
		} else {
			attrs = append(attrs, "paths", want.diff(got))
		}
		a.log.Warn("file tree drifted from the applied plan", attrs...)
	}
	a.mu.Lock()
	a.drifted = drifted
	a.disk = nil
	if drifted {
		a.disk = got
	}
	a.mu.Unlock()
	return drifted
}
