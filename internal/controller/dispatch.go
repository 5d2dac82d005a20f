package controller

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-multierror"

	"github.com/haptic-io/haptic/agentapi"
	"github.com/haptic-io/haptic/deployplan"
	"github.com/haptic-io/haptic/renderplan"
)

// Target is one HAProxy pod the loop deploys to: its name (the pod label
// of metrics and logs) and its agent, remote ([agentapi.Client]) or in
// process.
type Target struct {
	Name  string
	Agent agentapi.Applier
}

// PodResult is how one plan reached one pod.
type PodResult struct {
	Pod    string
	PlanID string
	// Skipped: the pod already ran the plan; nothing was sent.
	Skipped bool
	// Mode is the apply mode sent; Verdict is the planner's decision
	// (empty for reverts and skips).
	Mode    agentapi.Mode
	Verdict deployplan.Verdict
	// FullState: the pod got the full state and a reload after refusing
	// the planned apply as unsupported (version skew).
	FullState bool
	Ops       int
	Reasons   []deployplan.Reason
	// Reloaded: the agent reloaded HAProxy during the apply.
	Reloaded bool
	// Timings of the stages: the state read, the diff and the apply as the
	// controller saw it (the agent's own time is in Result.Took).
	StateTook, DiffTook, ApplyTook time.Duration
	// Result is the agent's answer, nil when none came.
	Result *agentapi.ApplyResult
	// Err is why the pod does not run the plan; nil on success.
	Err error
}

// modeLabel is the mode label of haptic_deploy_apply_total.
func (r PodResult) modeLabel() string {
	switch {
	case r.Mode == agentapi.ModeRevertLKG:
		return string(agentapi.ModeRevertLKG)
	case r.FullState || r.Mode == agentapi.ModeReload:
		return string(deployplan.VerdictReload)
	default:
		return string(r.Verdict)
	}
}

// dispatcher sends plans to targets: per pod, state → baseline → Diff →
// apply request → Apply; a version-skew NACK falls back to the full state
// and a reload, a fence NACK re-reads the state once. It is safe for
// concurrent use; pods are deployed in parallel.
type dispatcher struct {
	fence  atomic.Uint64 // the token of every apply; raised by a new leader term
	maxOps int
	plans  *planMemory
	log    *slog.Logger
	m      *metrics

	mu      sync.Mutex
	applied map[string]string // guarded by mu; pod → plan ID it runs, as last seen
	// reloading holds the pods whose applied plan waits for a reload the
	// agent scheduled (pacing), as last seen (guarded by mu).
	reloading map[string]bool
	// sent is, per pod, the output of the last plan it committed from
	// this dispatcher (guarded by mu): its files are the bases of the
	// next apply's patches.
	sent map[string]sentOutput
}

// sentOutput is an output and its plan ID.
type sentOutput struct {
	id  string
	out *renderplan.Output
}

func newDispatcher(fence uint64, maxOps int, log *slog.Logger, m *metrics) *dispatcher {
	d := &dispatcher{maxOps: maxOps, plans: newPlanMemory(0), log: log, m: m, applied: map[string]string{}, reloading: map[string]bool{}, sent: map[string]sentOutput{}}
	d.fence.Store(fence)
	return d
}

// forget drops what the dispatcher knows of pods that are not among
// targets (a pod deleted, or scaled away).
func (d *dispatcher) forget(targets []Target) {
	keep := make(map[string]bool, len(targets))
	for _, t := range targets {
		keep[t.Name] = true
	}
	d.mu.Lock()
	var gone []string
	for pod := range d.applied {
		if !keep[pod] {
			gone = append(gone, pod)
		}
	}
	for pod := range d.sent {
		if !keep[pod] {
			delete(d.sent, pod)
		}
	}
	for pod := range d.reloading {
		if !keep[pod] {
			delete(d.reloading, pod)
		}
	}
	d.mu.Unlock()
	for _, pod := range gone {
		d.setApplied(pod, "")
		d.mu.Lock()
		delete(d.applied, pod)
		d.mu.Unlock()
	}
}

// prefetched is a target's state read ahead of the render and, once
// diffAhead ran, the decision for it.
type prefetched struct {
	st       *agentapi.State
	err      error
	took     time.Duration
	dec      *deployplan.Decision
	diffTook time.Duration
}

// prefetch starts reading every target's state, so that the reads overlap
// the render, and returns a function that waits for them. The state is
// read before the render, so it is at least as old as the objects; the
// fence (ExpectedPlanID) still catches a pod that changed in between.
func (d *dispatcher) prefetch(ctx context.Context, targets []Target) func() map[string]prefetched {
	ch := make(chan map[string]prefetched, 1)
	go func() {
		var mu sync.Mutex
		m := make(map[string]prefetched, len(targets))
		var wg sync.WaitGroup
		for _, t := range targets {
			wg.Go(func() {
				start := time.Now()
				st, err := t.Agent.State(ctx)
				mu.Lock()
				m[t.Name] = prefetched{st: st, err: err, took: time.Since(start)}
				mu.Unlock()
			})
		}
		wg.Wait()
		ch <- m
	}()
	return func() map[string]prefetched { return <-ch }
}

// diffAhead diffs out against every state read ahead, in parallel, and
// keeps the decisions in pre for dispatch. Diff needs the plan only, so
// the loop runs it while out's plan ID is still being computed (a
// [renderplan.Cache] computes it in the background). A pod that turns
// out to run the plan already wastes its diff.
func (d *dispatcher) diffAhead(out *renderplan.Output, pre map[string]prefetched) {
	diffed := make([]prefetched, 0, len(pre))
	names := make([]string, 0, len(pre))
	for name, p := range pre {
		if p.err == nil {
			diffed, names = append(diffed, p), append(names, name)
		}
	}
	diff := func(i int) {
		p := &diffed[i]
		start := time.Now()
		dec := deployplan.Diff(out.Plan, d.baseline(p.st))
		p.dec, p.diffTook = &dec, time.Since(start)
	}
	if len(diffed) == 1 {
		diff(0) // the usual case in local mode: no goroutine to wait for
	} else {
		var wg sync.WaitGroup
		for i := range diffed {
			wg.Go(func() { diff(i) })
		}
		wg.Wait()
	}
	for i, name := range names {
		pre[name] = diffed[i]
	}
}

// dispatch deploys out to every target in parallel and returns one result
// per target, sorted by pod, and the failures aggregated. pre holds states
// read ahead (may be nil or miss targets).
func (d *dispatcher) dispatch(ctx context.Context, targets []Target, out *renderplan.Output, id string, pre map[string]prefetched) ([]PodResult, error) {
	d.plans.add(id, out.Plan)
	d.forget(targets)
	return d.each(targets, func(t Target) PodResult {
		var p *prefetched
		if v, ok := pre[t.Name]; ok {
			p = &v
		}
		return d.deploy(ctx, t, out, id, p)
	})
}

// revert sends the named pods, which run the refused plan, back to a
// good set; see revertOne.
func (d *dispatcher) revert(ctx context.Context, targets []Target, pods []string, refused string, good *renderplan.Output, goodID string) ([]PodResult, error) {
	want := map[string]bool{}
	for _, p := range pods {
		want[p] = true
	}
	var sel []Target
	for _, t := range targets {
		if want[t.Name] {
			sel = append(sel, t)
		}
	}
	return d.each(sel, func(t Target) PodResult { return d.revertOne(ctx, t, refused, good, goodID) })
}

func (d *dispatcher) each(targets []Target, f func(Target) PodResult) ([]PodResult, error) {
	results := make([]PodResult, len(targets))
	var wg sync.WaitGroup
	for i, t := range targets {
		wg.Go(func() { results[i] = f(t) })
	}
	wg.Wait()
	sort.Slice(results, func(i, j int) bool { return results[i].Pod < results[j].Pod })
	var errs *multierror.Error
	for _, r := range results {
		d.record(r)
		if r.Err != nil {
			errs = multierror.Append(errs, fmt.Errorf("pod %s: %w", r.Pod, r.Err))
		}
	}
	return results, errs.ErrorOrNil()
}

// podStates returns every known pod with the plan it runs.
func (d *dispatcher) podStates() map[string]string {
	d.mu.Lock()
	defer d.mu.Unlock()
	m := make(map[string]string, len(d.applied))
	for k, v := range d.applied {
		m[k] = v
	}
	return m
}

// reloadPending returns the pods whose applied plan waits for a
// scheduled reload.
func (d *dispatcher) reloadPending() map[string]bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	m := make(map[string]bool, len(d.reloading))
	for k, v := range d.reloading {
		if v {
			m[k] = true
		}
	}
	return m
}

// setReloading records whether pod's applied plan waits for a reload.
func (d *dispatcher) setReloading(pod string, pending bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if pending {
		d.reloading[pod] = true
	} else {
		delete(d.reloading, pod)
	}
}

// setApplied records that pod runs planID ("" when unknown).
func (d *dispatcher) setApplied(pod, planID string) {
	d.mu.Lock()
	old := d.applied[pod]
	d.applied[pod] = planID
	d.mu.Unlock()
	d.plans.runs(old, planID)
}

// setSent records that pod committed out, whose plan ID is id.
func (d *dispatcher) setSent(pod, id string, out *renderplan.Output) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.sent[pod] = sentOutput{id: id, out: out}
}

// payload returns what pod, in state st, needs of out's files: the bodies
// of the changed files, except those sent as patches. A changed file is
// patched when the agent takes patches, its file on disk is the one the
// last output this dispatcher committed to the pod has (the pod still
// runs that plan and the digests agree) and the patch pays
// ([agentapi.MakePatch]).
func (d *dispatcher) payload(pod string, st *agentapi.State, out *renderplan.Output) (map[string][]byte, map[string]agentapi.Patch) {
	if !st.BodyPatches {
		return bodies(out, st.Files), nil
	}
	d.mu.Lock()
	prev, ok := d.sent[pod]
	d.mu.Unlock()
	if !ok || prev.id != st.AppliedPlanID || st.AppliedPlanID == "" {
		return bodies(out, st.Files), nil
	}
	return patches(out, st.Files, prev.out)
}

// patches is bodies with the changed files that prev (the output the pod
// runs) has with the digest on disk sent as patches where they pay.
func patches(out *renderplan.Output, onDisk map[string]renderplan.Digest, prev *renderplan.Output) (map[string][]byte, map[string]agentapi.Patch) {
	b := bodies(out, onDisk)
	prevDigest := make(map[string]renderplan.Digest, len(prev.Plan.Files))
	for _, f := range prev.Plan.Files {
		prevDigest[f.Path] = f.Digest
	}
	var p map[string]agentapi.Patch
	for _, f := range prev.Files {
		body, changed := b[f.Path]
		have, exists := onDisk[f.Path]
		if !changed || !exists || have != prevDigest[f.Path] {
			continue
		}
		pt, ok := agentapi.MakePatch(have, f.Body, body)
		if !ok {
			continue
		}
		if p == nil {
			p = make(map[string]agentapi.Patch)
		}
		p[f.Path] = pt
		delete(b, f.Path)
	}
	return b, p
}

// record updates the metrics with one result.
func (d *dispatcher) record(r PodResult) {
	if r.Skipped {
		return
	}
	if r.Result != nil && r.Result.Reload.Performed {
		d.m.reloads.WithLabelValues(r.Pod).Inc()
	}
	if r.Err != nil {
		d.m.applyFailures.WithLabelValues(r.Pod, failureStage(r.Err)).Inc()
		return
	}
	d.m.applies.WithLabelValues(r.Pod, r.modeLabel()).Inc()
	d.m.deploymentDuration.Observe((r.StateTook + r.DiffTook + r.ApplyTook).Seconds())
}

// failureStage is the stage label of a failed apply.
func failureStage(err error) string {
	var nack *agentapi.NackError
	var se *stateError
	switch {
	case errors.As(err, &nack):
		return string(nack.Stage)
	case errors.As(err, &se):
		return "state"
	default:
		return "transport"
	}
}

// stateError is a failed State call.
type stateError struct{ err error }

func (e *stateError) Error() string { return "read agent state: " + e.err.Error() }
func (e *stateError) Unwrap() error { return e.err }

// deploy brings one pod to out, whose plan ID is id (computing it encodes
// the whole plan, so it is done once per render); pre, when set, is the
// pod's state read ahead.
func (d *dispatcher) deploy(ctx context.Context, t Target, out *renderplan.Output, id string, pre *prefetched) PodResult {
	r := PodResult{Pod: t.Name, PlanID: id}
	for attempt := 0; ; attempt++ {
		var st *agentapi.State
		var err error
		if attempt == 0 && pre != nil {
			st, err = pre.st, pre.err
			r.StateTook += pre.took
		} else {
			start := time.Now()
			st, err = t.Agent.State(ctx)
			r.StateTook += time.Since(start)
		}
		if err != nil {
			r.Err = &stateError{err}
			d.setApplied(t.Name, "")
			return r
		}
		d.setApplied(t.Name, st.AppliedPlanID)
		d.setReloading(t.Name, st.ReloadPending)
		if st.AppliedPlanID == id && !st.Drifted {
			r.Skipped = true
			return r
		}

		var dec deployplan.Decision
		if attempt == 0 && pre != nil && pre.dec != nil {
			dec = *pre.dec
			r.DiffTook += pre.diffTook
		} else {
			start := time.Now()
			dec = deployplan.Diff(out.Plan, d.baseline(st))
			r.DiffTook += time.Since(start)
		}
		r.Mode, r.Verdict, r.Ops, r.Reasons = agentapi.ModeAuto, dec.Verdict, len(dec.Ops), dec.Reasons
		req := &agentapi.ApplyRequest{
			PlanID:         id,
			ExpectedPlanID: st.AppliedPlanID,
			Fence:          d.fence.Load(),
			Mode:           agentapi.ModeAuto,
			Verdict:        dec.Verdict,
			Files:          dec.Files,
			Ops:            dec.Ops,
		}
		req.Bodies, req.Patches = d.payload(t.Name, st, out)
		res, err := d.apply(ctx, t, req, &r)
		var nack *agentapi.NackError
		if len(req.Patches) > 0 && errors.As(err, &nack) && !nack.Unsupported &&
			(nack.Stage == agentapi.StageDecode || nack.Stage == agentapi.StageFiles) {
			// The pod could not rebuild a file from its patch (its file
			// is not the base this dispatcher remembers): send the bodies.
			d.log.Info("agent refused the patched apply: sending the bodies", "pod", t.Name, "plan_id", id, "message", nack.Message)
			full := *req
			full.Bodies, full.Patches = bodies(out, st.Files), nil
			res, err = d.apply(ctx, t, &full, &r)
		}
		switch {
		case errors.Is(err, agentapi.ErrUnsupported):
			// Version skew degrades to the full state and a reload.
			d.log.Warn("agent refused the apply as unsupported: sending the full state and a reload", "pod", t.Name, "plan_id", id, "error", err)
			full := &agentapi.ApplyRequest{
				PlanID:  id,
				Fence:   d.fence.Load(),
				Mode:    agentapi.ModeReload,
				Verdict: agentapi.VerdictReload,
				Files:   out.Plan.Files,
				Bodies:  bodies(out, nil),
			}
			r.FullState, r.Mode, r.Ops = true, agentapi.ModeReload, 0
			res, err = d.apply(ctx, t, full, &r)
		case errors.As(err, &nack) && nack.Stage == agentapi.StageFence && attempt == 0:
			// The pod changed under us (another apply, a restart): read
			// its state again and plan anew, once.
			d.log.Info("agent fenced the apply: re-reading its state", "pod", t.Name, "plan_id", id, "message", nack.Message)
			continue
		}
		r.Result, r.Err = res, err
		if err == nil {
			d.setApplied(t.Name, id)
			d.setReloading(t.Name, res != nil && res.Reload.Scheduled)
			d.setSent(t.Name, id, out)
		} else if res != nil && res.Rollback.Performed && res.Rollback.OK {
			d.setApplied(t.Name, st.AppliedPlanID)
		} else {
			d.setApplied(t.Name, "")
		}
		return r
	}
}

// apply sends req and times it.
func (d *dispatcher) apply(ctx context.Context, t Target, req *agentapi.ApplyRequest, r *PodResult) (*agentapi.ApplyResult, error) {
	start := time.Now()
	res, err := t.Agent.Apply(ctx, req)
	r.ApplyTook += time.Since(start)
	if res != nil && res.Reload.Performed {
		r.Reloaded = true
	}
	var nack *agentapi.NackError
	if res == nil && errors.As(err, &nack) && nack.Result != nil {
		res = nack.Result
	}
	return res, err
}

// revertOne sends one pod that runs the refused plan back to a good set.
// The agent's last-known-good set is the last apply it committed, which
// is the refused plan itself when that plan went out at runtime or
// file-only (HAProxy had no reason to load its files). So when the agent's
// last-known-good plan is the refused one (or unknown) and the controller
// has a plan that passed the gate, the pod gets that plan's full state and
// a reload; otherwise it gets mode revert_lkg.
func (d *dispatcher) revertOne(ctx context.Context, t Target, refused string, good *renderplan.Output, goodID string) PodResult {
	r := PodResult{Pod: t.Name, Mode: agentapi.ModeRevertLKG}
	start := time.Now()
	st, err := t.Agent.State(ctx)
	r.StateTook = time.Since(start)
	if err != nil {
		r.Err = &stateError{err}
		return r
	}
	req := &agentapi.ApplyRequest{Fence: d.fence.Load(), Mode: agentapi.ModeRevertLKG}
	if good != nil && (st.LastKnownGoodPlanID == "" || st.LastKnownGoodPlanID == refused) {
		d.plans.add(goodID, good.Plan)
		req = &agentapi.ApplyRequest{
			PlanID:  goodID,
			Fence:   d.fence.Load(),
			Mode:    agentapi.ModeReload,
			Verdict: agentapi.VerdictReload,
			Files:   good.Plan.Files,
			Bodies:  bodies(good, st.Files),
		}
		r.FullState = true
	}
	r.PlanID = req.PlanID
	res, err := d.apply(ctx, t, req, &r)
	r.Result, r.Err = res, err
	switch {
	case err != nil:
		d.setApplied(t.Name, "")
	case res != nil && res.PlanID != "":
		r.PlanID = res.PlanID
		d.setApplied(t.Name, res.PlanID)
	default:
		d.setApplied(t.Name, r.PlanID)
	}
	return r
}

// baseline turns an agent's state into what Diff needs. An applied plan
// the controller does not remember, or a drifted tree, is an unknown
// baseline: full state and a reload.
func (d *dispatcher) baseline(st *agentapi.State) deployplan.Baseline {
	b := deployplan.Baseline{
		HAProxyVersion: st.HAProxyVersion,
		AgentOps:       st.OpKinds,
		MaxOps:         d.maxOps,
	}
	if st.AppliedPlanID != "" && !st.Drifted {
		b.Plan = d.plans.get(st.AppliedPlanID)
	}
	b.PendingDeletes = st.PendingDeletes
	return b
}

// bodies returns the bodies of the files of out whose digest differs from
// the one on disk (onDisk nil: every body).
func bodies(out *renderplan.Output, onDisk map[string]renderplan.Digest) map[string][]byte {
	digests := make(map[string]renderplan.Digest, len(out.Plan.Files))
	for _, f := range out.Plan.Files {
		digests[f.Path] = f.Digest
	}
	b := make(map[string][]byte)
	for _, f := range out.Files {
		if have, ok := onDisk[f.Path]; ok && have == digests[f.Path] {
			continue
		}
		b[f.Path] = f.Body
	}
	return b
}
