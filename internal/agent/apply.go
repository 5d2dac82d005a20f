package agent

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/haptic-io/haptic/agentapi"
	"github.com/haptic-io/haptic/renderplan"
)

// Crash points, in apply order: the test hook (Config.crashPoint) is
// called with each. "swap:<path>" comes before each rename of the swap.
// Only an apply that serves through runtime ops alone runs ops; it passes
// "marked" and "ops" before "staged".
const (
	stepMarked    = "marked" // the ops mark is written; the ops are next
	stepStaged    = "staged"
	stepJournaled = "journaled" // the staged files and the journal are durable
	stepSwapped   = "swapped"
	stepOps       = "ops"
	stepReloaded  = "reloaded"
	stepCommitted = "committed"
	stepDone      = "done"
)

// Apply runs one apply transaction (see the package doc): fence, check,
// stage, journal, swap, reload, verify, commit; an apply that serves
// through runtime ops alone runs them right after the check. On a NACK it
// returns the result and a *[agentapi.NackError] carrying it; the old
// worker keeps serving and the tree is back to the old files.
func (a *Agent) Apply(ctx context.Context, req *agentapi.ApplyRequest) (*agentapi.ApplyResult, error) {
	if req == nil {
		return nil, &agentapi.NackError{Stage: agentapi.StageDecode, Op: -1, Message: "nil request"}
	}
	start := time.Now()
	a.applyMu.Lock()
	defer a.applyMu.Unlock()

	mode := req.Mode
	if mode == "" {
		mode = agentapi.ModeAuto
	}
	res := &agentapi.ApplyResult{PlanID: req.PlanID, Timings: map[agentapi.Stage]time.Duration{}}
	log := a.log.With("plan_id", req.PlanID)
	a.settleRecoveryLocked(ctx)
	err := a.apply(ctx, req, mode, res, log)
	res.Took = time.Since(start)

	result := "ack"
	var nack *agentapi.NackError
	switch {
	case errors.As(err, &nack):
		result = string(nack.Stage)
		res.OK = false
		res.Stage, res.Message = nack.Stage, nack.Message
		if nack.Stage != agentapi.StageFence && nack.Stage != agentapi.StageDecode {
			nack.Result = res
		}
		log.Warn("apply refused", "stage", nack.Stage, "op", nack.Op, "message", nack.Message)
	case err != nil:
		result = "error"
		res.OK, res.Stage, res.Message = false, agentapi.StageCommit, err.Error()
		nack = &agentapi.NackError{Stage: agentapi.StageCommit, Op: -1, Message: err.Error(), Result: res}
	default:
		res.OK = true
		log.Info("apply done", "took", res.Took, "reload", res.Reload.Performed, "scheduled", res.Reload.Scheduled, "timings", res.Timings)
	}
	a.metrics.applies.WithLabelValues(string(mode), result).Inc()
	a.metrics.applyDuration.WithLabelValues(string(mode)).Observe(res.Took.Seconds())
	a.mu.Lock()
	a.lastApply, a.lastApplyOps = cloneResult(res), len(res.Ops)
	a.mu.Unlock()
	if nack != nil {
		return res, nack
	}
	return res, nil
}

// cloneResult copies r, its op results cut as [agentapi.State.LastApply]
// keeps them.
func cloneResult(r *agentapi.ApplyResult) *agentapi.ApplyResult {
	c := *r
	c.Ops = slices.Clone(stateOps(r.Ops))
	c.Timings = make(map[agentapi.Stage]time.Duration, len(r.Timings))
	for k, v := range r.Timings {
		c.Timings[k] = v
	}
	return &c
}

func nackf(stage agentapi.Stage, op int, format string, args ...any) *agentapi.NackError {
	return &agentapi.NackError{Stage: stage, Op: op, Message: fmt.Sprintf(format, args...)}
}

// plannedApply is a request after decoding: what to write and run.
type plannedApply struct {
	planID  string
	files   manifest
	bodies  map[string][]byte
	patches map[string]agentapi.Patch
	rebuilt map[string]bool // bodies applyPatches made (not the request's)
	// pending are the patched bodies applyPatches checked but did not
	// make yet (body makes them): the ops do not wait for them.
	pending  map[string]pendingBody
	ops      []agentapi.Op
	reload   bool   // the mode or verdict asks for a reload
	reason   string // why
	fence    uint64
	revertTo bool

	// lineFiles are the kinds of the map and crt-list files, whose lines
	// checkLines bounds (lines.go).
	lineFiles map[string]renderplan.FileKind
}

// apply runs the stages of one transaction in order; each returns the
// NACK that ends it. The tree is hashed and the new files checked before
// anything is written; an apply that serves through runtime ops alone
// runs them next, then every apply stages and journals its files, swaps
// them in, reloads (and verifies) when it must and commits.
func (a *Agent) apply(ctx context.Context, req *agentapi.ApplyRequest, mode agentapi.Mode, res *agentapi.ApplyResult, log *slog.Logger) error {
	p, err := a.admit(ctx, req, mode, res)
	if err != nil {
		return err
	}
	r := &applyRun{a: a, p: p, res: res, log: log, needReload: p.reload, reason: p.reason}
	// An apply that serves through runtime ops alone runs them before it
	// writes anything into the tree: staging, the journal and the swap
	// are not on the path of the change it serves. Its socket session is
	// dialled while the files are checked.
	r.opsFirst = !p.reload && len(p.ops) > 0
	if r.opsFirst {
		r.sess = a.warmSession(ctx)
		defer r.sess.close()
	}
	if err := r.checkFiles(); err != nil {
		return err
	}
	if r.opsFirst {
		if err := r.runOps(ctx); err != nil {
			return err
		}
	}
	if len(r.entries) > 0 {
		if err := r.stageFiles(ctx); err != nil {
			return err
		}
		if err := r.swapFiles(ctx); err != nil {
			return err
		}
	}
	if r.needReload {
		if err := r.reload(ctx); err != nil {
			return err
		}
	}
	return r.commit(ctx)
}

// applyRun is one apply on its way through the stages of [Agent.apply]:
// what each stage leaves for the next. It lives for one call, under
// applyMu.
type applyRun struct {
	a   *Agent
	p   *plannedApply
	res *agentapi.ApplyResult
	log *slog.Logger

	opsFirst bool       // the apply serves through runtime ops alone
	sess     *opSession // the ops' socket session; nil unless opsFirst

	entries []journalEntry // the swap; empty when the tree has the files
	// live says the runtime state changed: a restore must reload.
	live       bool
	needReload bool
	reason     string // why the reload
	scheduled  bool   // the reload was deferred by the pacing

	tx       *txn             // nil when nothing is swapped
	stamps   map[string]stamp // of the staged files, by tree path
	treeDirs syncSet          // durable point 2, flushed with the state
}

// admit decodes and fences the request (the fence stage) and, for
// revert_lkg, loads the last-known-good set into the plan it returns.
func (a *Agent) admit(ctx context.Context, req *agentapi.ApplyRequest, mode agentapi.Mode, res *agentapi.ApplyResult) (*plannedApply, error) {
	t := time.Now()
	p, err := a.decode(req, mode, agentapi.BodiesChecked(ctx, req))
	if err != nil {
		return nil, err
	}
	if err := a.fence(req); err != nil {
		return nil, err
	}
	res.Timings[agentapi.StageFence] = time.Since(t)
	if p.revertTo {
		if err := a.loadRevert(req, p); err != nil {
			return nil, err
		}
		res.PlanID = p.planID
	}
	return p, nil
}

// checkFiles checks the files against the tree and lists the swap;
// nothing is written into it yet, so a refusal here changes nothing,
// runtime state included.
func (r *applyRun) checkFiles() error {
	t := time.Now()
	cur, err := hashTreeCached(r.a.base, r.a.treeCache)
	if err != nil {
		return nackf(agentapi.StageFiles, -1, "hash the tree: %v", err)
	}
	if err := r.a.applyPatches(r.p, cur); err != nil {
		return err
	}
	if r.entries, err = r.a.entries(r.p, cur); err != nil {
		return err
	}
	r.res.Timings[agentapi.StageFiles] = time.Since(t)
	return nil
}

// runOps runs the ops of an apply that serves through them alone, after
// writing the ops mark; a failed op makes the fallback reload, onto the
// new files staged next.
func (r *applyRun) runOps(ctx context.Context) error {
	if err := r.a.markOps(r.p.planID); err != nil {
		return nackf(agentapi.StageFiles, -1, "%v", err)
	}
	r.a.crash(stepMarked)
	t := time.Now()
	r.live = true
	if idx, msg := r.a.runOps(ctx, r.sess, r.p, r.res, r.log); idx >= 0 {
		r.needReload = true
		r.reason = fmt.Sprintf("fallback: op %d failed: %s", idx, msg)
		r.log.Warn("runtime op refused; reloading onto the new files", "op", idx, "message", msg)
	}
	r.res.Timings[agentapi.StageOps] = time.Since(t)
	r.a.crash(stepOps)
	return nil
}

// stageFiles stages the changed bodies, links the old files aside and
// writes the journal, then makes all of it durable in one flush.
//
// Staging, the swap and the commit have three durable points (each a
// flush of a syncSet; see syncset.go for why batching them is cheap):
//  1. before the first rename into the tree (here): the journal (recovery
//     must know a swap may be under way), the hard links of the old files
//     (a rollback puts them back) and the staged bodies' data (the commit
//     names them and never rewrites them);
//  2. before the commit point: the tree directories the swap renamed into
//     (a committed apply is only rolled forward) and the temp state
//     file's data;
//  3. the commit point: the rename of state.json and its directory.
//
// Nothing else is synced: a crash before 1 completes leaves the tree
// untouched, one between 1 and 3 rolls back from the journal, one after 3
// rolls forward (cleanup only).
func (r *applyRun) stageFiles(ctx context.Context) error {
	t := time.Now()
	r.tx = r.a.newTxn()
	var staged syncSet // point 1
	var err error
	if err = r.p.makeBodies(); err != nil {
		return r.failStaging(ctx, &staged, "%v", err)
	}
	if r.stamps, err = r.tx.stage(&staged, r.p.bodies, r.entries, r.p.files); err != nil {
		return r.failStaging(ctx, &staged, "%v", err)
	}
	r.a.crash(stepStaged)
	if err := r.tx.backup(&staged, r.entries); err != nil {
		return r.failStaging(ctx, &staged, "%v", err)
	}
	j := journal{Txn: r.tx.id, PlanID: r.p.planID, PrevPlanID: r.a.appliedPlan(), Entries: r.entries}
	if err := writeJournal(&staged, r.a.state, j); err != nil {
		return r.failStaging(ctx, &staged, "%v", err)
	}
	if err := staged.flush(); err != nil {
		return r.failStaging(ctx, &staged, "sync the staged files and the journal: %v", err)
	}
	r.a.crash(stepJournaled)
	r.res.Timings[agentapi.StageFiles] += time.Since(t)
	return nil
}

// failStaging undoes a staging that failed before the swap: the tree is
// untouched, so only the staged files, the journal and (when ops ran)
// the runtime state are put back. It returns the files-stage NACK.
func (r *applyRun) failStaging(ctx context.Context, staged *syncSet, format string, err error) error {
	staged.discard()
	if rerr := r.a.state.Remove(journalFile); rerr == nil || isNotExist(rerr) {
		_ = r.tx.cleanup()
	}
	if r.live {
		r.a.reloadOntoTree(ctx, r.res)
	}
	return nackf(agentapi.StageFiles, -1, format, err)
}

// swapFiles renames the staged files into the tree, haproxy.cfg last; a
// failure restores the journal.
func (r *applyRun) swapFiles(ctx context.Context) error {
	t := time.Now()
	if err := r.tx.swap(&r.treeDirs, r.entries, r.a.crash); err != nil {
		r.a.restore(ctx, r.tx, r.entries, r.live, r.res)
		return nackf(agentapi.StageSwap, -1, "%v", err)
	}
	r.a.crash(stepSwapped)
	r.res.Timings[agentapi.StageSwap] = time.Since(t)
	return nil
}

// reload reloads HAProxy and verifies the new worker, or leaves the
// reload to the pacing when it is not a fallback and one ran too
// recently. A failed reload or verification restores the old files (and
// runtime state) and returns the NACK of the stage that failed.
func (r *applyRun) reload(ctx context.Context) error {
	a, res := r.a, r.res
	fallback := r.live && r.needReload
	res.Reload.Reason = r.reason
	// The first plan replaces the bootstrap config, which answers 503 to
	// every request: it never waits for the pacing (a refused first
	// attempt, HAProxy still starting, would otherwise hold it).
	a.mu.Lock()
	first := a.durable.AppliedPlanID == ""
	a.mu.Unlock()
	if wait := a.reloadWait(); wait > 0 && !fallback && !first {
		r.scheduled = true
		res.Reload.Scheduled = true
		a.mu.Lock()
		a.reloadDue, a.reloadReason = true, r.reason
		a.mu.Unlock()
		a.poke()
		return nil
	}
	t := time.Now()
	info, stage, err := a.reloadAndVerify(ctx)
	res.Reload = info
	res.Reload.Reason = r.reason
	if stage == "" {
		stage = agentapi.StageReload
	}
	res.Timings[stage] = time.Since(t)
	if err != nil {
		if r.tx != nil {
			a.restore(ctx, r.tx, r.entries, r.live, res)
		} else if r.live {
			a.restoreLive(ctx, res)
		}
		return nackf(stage, -1, "%s", err)
	}
	r.live = false
	a.crash(stepReloaded)
	return nil
}

// commit writes the new durable state (durable points 2 and 3), with a
// new last-known-good set when this apply reloaded and verified, then
// primes the tree and body caches and cleans the transaction up.
func (r *applyRun) commit(ctx context.Context) error {
	a, p, res, tx := r.a, r.p, r.res, r.tx
	t := time.Now()
	a.mu.Lock()
	next := a.durable
	a.mu.Unlock()
	txID := ""
	if tx != nil {
		txID = tx.id
	}
	next.Txn = txID
	next.AppliedPlanID = p.planID
	next.Manifest = p.files
	next.NewestToken = max(next.NewestToken, p.fence)
	next.ReloadPending = r.scheduled || a.reloadOwed()
	// Only a set HAProxy loaded in a verified reload becomes
	// last-known-good: a set that reached it through runtime ops was never
	// parsed, and revert_lkg must lead back to one that was.
	verified := res.Reload.Performed && res.Reload.OK && !next.ReloadPending
	if _, err := a.commitStateLocked(next, verified, txID, &r.treeDirs); err != nil {
		if tx != nil {
			a.restore(ctx, tx, r.entries, r.live || res.Reload.Performed, res)
		}
		return nackf(agentapi.StageCommit, -1, "write state: %v", err)
	}
	// The runtime state matches the committed plan: its own ops ran, or
	// a reload loaded the committed tree.
	if r.opsFirst || (res.Reload.Performed && res.Reload.OK) {
		a.clearOpsMark()
	}
	a.crash(stepCommitted)
	// The tree now holds the staged files under their paths: the next
	// apply knows their digests without reading them back.
	for path, st := range r.stamps {
		a.treeCache[path] = st
	}
	a.cacheBodies(p)
	a.mu.Lock()
	a.drifted = false
	a.baselineUnknown = false
	a.mu.Unlock()
	if tx != nil {
		// Neither is synced: a journal that survives a crash names the
		// committed transaction (roll forward: cleanup only), and the
		// next commit's directory sync makes the removal durable before
		// state.json can name another transaction.
		_ = a.state.Remove(journalFile)
		_ = tx.cleanup()
	}
	res.Timings[agentapi.StageCommit] = time.Since(t)
	a.crash(stepDone)
	return nil
}

// decode checks the request and turns it into a plannedApply; checked
// says the handler already hashed the bodies (agentapi.BodiesChecked).
func (a *Agent) decode(req *agentapi.ApplyRequest, mode agentapi.Mode, checked bool) (*plannedApply, error) {
	p := &plannedApply{planID: req.PlanID, fence: req.Fence, bodies: req.Bodies, patches: req.Patches, ops: req.Ops}
	switch mode {
	case agentapi.ModeAuto:
	case agentapi.ModeReload:
		p.reload, p.reason = true, "mode reload"
	case agentapi.ModeRevertLKG:
		if len(req.Files) > 0 || len(req.Ops) > 0 || len(req.Bodies) > 0 || len(req.Patches) > 0 {
			return nil, nackf(agentapi.StageDecode, -1, "mode revert_lkg carries no files and no ops")
		}
		p.reload, p.reason, p.revertTo = true, "mode revert_lkg", true
		return p, nil
	default:
		return nil, &agentapi.NackError{Stage: agentapi.StageDecode, Op: -1, Unsupported: true, Message: fmt.Sprintf("unknown mode %q", mode)}
	}
	switch req.Verdict {
	case "", agentapi.VerdictReload:
		if !p.reload {
			p.reload, p.reason = true, "verdict reload"
		}
	case agentapi.VerdictNoop, agentapi.VerdictFileOnly, agentapi.VerdictRuntime:
	default:
		return nil, &agentapi.NackError{Stage: agentapi.StageDecode, Op: -1, Unsupported: true, Message: fmt.Sprintf("unknown verdict %q", req.Verdict)}
	}
	if req.PlanID == "" || len(req.PlanID) > agentapi.MaxPlanIDLen {
		return nil, nackf(agentapi.StageDecode, -1, "plan ID is empty or longer than %d bytes", agentapi.MaxPlanIDLen)
	}
	p.files = make(manifest, len(req.Files))
	for _, f := range req.Files {
		if err := agentapi.ValidatePath(f.Path); err != nil {
			return nil, nackf(agentapi.StageDecode, -1, "%v", err)
		}
		if err := checkPath(f.Path); err != nil {
			return nil, nackf(agentapi.StageDecode, -1, "%v", err)
		}
		if _, dup := p.files[f.Path]; dup {
			return nil, nackf(agentapi.StageDecode, -1, "file %s listed twice", f.Path)
		}
		if !validDigest(f.Digest) {
			return nil, nackf(agentapi.StageDecode, -1, "file %s: malformed digest %q", f.Path, f.Digest)
		}
		p.files[f.Path] = f.Digest
		if f.Kind == renderplan.FileMap || f.Kind == renderplan.FileCrtList {
			if p.lineFiles == nil {
				p.lineFiles = map[string]renderplan.FileKind{}
			}
			p.lineFiles[f.Path] = f.Kind
		}
		if pt, ok := req.Patches[f.Path]; ok {
			if _, both := req.Bodies[f.Path]; both {
				return nil, nackf(agentapi.StageDecode, -1, "file %s has a body and a patch", f.Path)
			}
			if !validDigest(pt.Base) || pt.Prefix < 0 || pt.Suffix < 0 || pt.Size() != f.Size {
				return nil, nackf(agentapi.StageDecode, -1, "file %s: patch on %q makes %d bytes, the manifest says %d", f.Path, pt.Base, pt.Size(), f.Size)
			}
		}
		if b, ok := req.Bodies[f.Path]; ok {
			if len(b) != f.Size {
				return nil, nackf(agentapi.StageDecode, -1, "file %s: body has %d bytes, the manifest says %d", f.Path, len(b), f.Size)
			}
			// The handler hashed the bodies of a request it built; any
			// other is hashed here. Either way what is staged is what the
			// manifest names.
			if !checked {
				if got := renderplan.DigestOf(b); got != f.Digest {
					return nil, nackf(agentapi.StageDecode, -1, "file %s: body has digest %s, the manifest says %s", f.Path, got, f.Digest)
				}
			}
		}
	}
	if _, ok := p.files[renderplan.ConfigPath]; !ok {
		return nil, nackf(agentapi.StageDecode, -1, "the files do not list %s", renderplan.ConfigPath)
	}
	for path := range req.Bodies {
		if _, ok := p.files[path]; !ok {
			return nil, nackf(agentapi.StageDecode, -1, "body for %q, which the files do not list", path)
		}
	}
	for path := range req.Patches {
		if _, ok := p.files[path]; !ok {
			return nil, nackf(agentapi.StageDecode, -1, "patch for %q, which the files do not list", path)
		}
	}
	for i, op := range req.Ops {
		if err := op.Validate(); err != nil {
			return nil, nackf(agentapi.StageDecode, i, "%v", err)
		}
	}
	return p, nil
}

func validDigest(d renderplan.Digest) bool {
	if len(d) != 16 {
		return false
	}
	_, err := strconv.ParseUint(string(d), 16, 64)
	return err == nil && strings.ToLower(string(d)) == string(d)
}

// fence refuses a stale token or a wrong expected plan, and records the
// token as the newest seen.
func (a *Agent) fence(req *agentapi.ApplyRequest) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if req.Fence < a.durable.NewestToken {
		return nackf(agentapi.StageFence, -1, "fencing token %d is older than %d", req.Fence, a.durable.NewestToken)
	}
	if req.ExpectedPlanID != "" {
		cur := a.durable.AppliedPlanID
		if a.drifted || a.baselineUnknown {
			cur = ""
		}
		if cur != req.ExpectedPlanID {
			if cur == "" {
				cur = "unknown"
			}
			return nackf(agentapi.StageFence, -1, "expected plan %s, the pod runs %s", req.ExpectedPlanID, cur)
		}
	}
	return nil
}

// loadRevert fills p with the last-known-good set.
func (a *Agent) loadRevert(req *agentapi.ApplyRequest, p *plannedApply) error {
	planID, files, bodies, err := a.loadLKG()
	if err != nil {
		return nackf(agentapi.StageFiles, -1, "revert_lkg: %v", err)
	}
	if req.PlanID != "" && req.PlanID != planID {
		return nackf(agentapi.StageFence, -1, "revert_lkg to %s, the last-known-good plan is %s", req.PlanID, planID)
	}
	p.planID, p.files, p.bodies = planID, files, bodies
	return nil
}

// applyPatches checks every patch of p: the file on disk must be the
// patch's base (cur, the tree's digests, says so), and what the patch
// makes of it must have the manifest's digest; otherwise the apply is
// refused at the files stage and nothing is written. The bodies are made
// when first needed (p.body), after the ops as a rule: checking takes a
// hash of the parts, making them a copy of the whole file. p.bodies
// becomes a new map; the request's is left alone.
func (a *Agent) applyPatches(p *plannedApply, cur manifest) error {
	if len(p.patches) == 0 {
		return nil
	}
	bodies := make(map[string][]byte, len(p.bodies)+len(p.patches))
	maps.Copy(bodies, p.bodies)
	p.rebuilt = make(map[string]bool, len(p.patches))
	p.pending = make(map[string]pendingBody, len(p.patches))
	for path, pt := range p.patches {
		if have, ok := cur[path]; !ok || have != pt.Base {
			if !ok {
				have = "absent"
			}
			return nackf(agentapi.StageFiles, -1, "patch for %s applies to %s, the disk has %s", path, pt.Base, have)
		}
		if _, err := checkTarget(a.base, path); err != nil {
			return nackf(agentapi.StageFiles, -1, "%v", err)
		}
		// The file on disk is the base (its digest says so); the body an
		// earlier apply wrote there is the same bytes, without a read.
		base := a.bodyCache[path].body
		if a.bodyCache[path].sum != pt.Base {
			var err error
			if base, err = a.base.ReadFile(path); err != nil {
				return nackf(agentapi.StageFiles, -1, "read the base of the patch for %s: %v", path, err)
			}
		}
		got, err := pt.Digest(base)
		if err != nil {
			return nackf(agentapi.StageFiles, -1, "patch for %s: %v", path, err)
		}
		if got != p.files[path] {
			return nackf(agentapi.StageFiles, -1, "patch for %s makes digest %s, the manifest says %s", path, got, p.files[path])
		}
		p.pending[path] = pendingBody{patch: pt, base: base}
		p.rebuilt[path] = true
	}
	p.bodies = bodies
	return nil
}

// pendingBody is a checked patch and the base it applies to.
type pendingBody struct {
	patch agentapi.Patch
	base  []byte
}

// body returns the body p writes at path, making it from its patch if
// need be; false when p has none.
func (p *plannedApply) body(path string) ([]byte, bool, error) {
	if b, ok := p.bodies[path]; ok {
		return b, true, nil
	}
	pb, ok := p.pending[path]
	if !ok {
		return nil, false, nil
	}
	b, err := pb.patch.Apply(pb.base)
	if err != nil {
		return nil, true, fmt.Errorf("patch for %s: %w", path, err)
	}
	p.bodies[path] = b
	delete(p.pending, path)
	return b, true, nil
}

// makeBodies makes every body that is still a patch.
func (p *plannedApply) makeBodies() error {
	for path := range p.pending {
		if _, _, err := p.body(path); err != nil {
			return err
		}
	}
	return nil
}

// cachedBody is the body of a file the agent wrote, and its digest.
type cachedBody struct {
	sum  renderplan.Digest
	body []byte
}

// cacheBodies keeps, after p was committed, the body of every file p
// wrote that a patch may apply to (at least agentapi.MinPatchSize bytes),
// and forgets the bodies of files p changed otherwise or removed. The
// request's bodies are copied: the handler's buffers are not the agent's
// to keep.
func (a *Agent) cacheBodies(p *plannedApply) {
	for path, c := range a.bodyCache {
		if p.files[path] != c.sum {
			delete(a.bodyCache, path)
		}
	}
	for path, body := range p.bodies {
		if len(body) < agentapi.MinPatchSize || a.bodyCache[path].sum == p.files[path] {
			continue
		}
		if !p.rebuilt[path] {
			body = bytes.Clone(body)
		}
		a.bodyCache[path] = cachedBody{sum: p.files[path], body: body}
	}
}

// entries lists the swap: every file whose content on disk differs from
// the new set, and every file on disk the new set does not list.
func (a *Agent) entries(p *plannedApply, cur manifest) ([]journalEntry, error) {
	var entries []journalEntry
	for path, d := range p.files {
		have, exists := cur[path]
		if exists && have == d {
			continue
		}
		_, body := p.bodies[path]
		if _, pending := p.pending[path]; !body && !pending {
			if !exists {
				have = "absent"
			}
			return nil, nackf(agentapi.StageFiles, -1, "no body for %s: the disk has %s, the manifest %s", path, have, d)
		}
		if err := a.checkLines(p, path); err != nil {
			return nil, err
		}
		if exists {
			if _, err := checkTarget(a.base, path); err != nil {
				return nil, nackf(agentapi.StageFiles, -1, "%v", err)
			}
		}
		// A parent that escapes the base directory is refused here, not
		// half-way through the swap.
		if _, err := a.base.Lstat(parentOf(path)); err != nil && !isNotExist(err) {
			return nil, nackf(agentapi.StageFiles, -1, "%v: %v", ErrUnsafePath, err)
		}
		entries = append(entries, journalEntry{Path: path, Old: exists, New: true})
	}
	for path := range cur {
		if _, ok := p.files[path]; !ok {
			entries = append(entries, journalEntry{Path: path, Old: true})
		}
	}
	return swapOrder(entries), nil
}

func (a *Agent) newTxn() *txn {
	a.mu.Lock()
	a.seq++
	id := fmt.Sprintf("%d-%d", a.cfg.Now().UnixNano(), a.seq)
	a.mu.Unlock()
	return &txn{id: id, base: a.base}
}

func (a *Agent) appliedPlan() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.durable.AppliedPlanID
}

func (a *Agent) crash(step string) {
	if a.cfg.crashPoint != nil {
		a.cfg.crashPoint(step)
	}
}

// restore rolls the tree back to the journal's old files; when live, the
// runtime state changed too and a reload brings HAProxy onto the restored
// files. A restore that fails leaves the journal for the next start and
// the baseline unknown.
func (a *Agent) restore(ctx context.Context, tx *txn, entries []journalEntry, live bool, res *agentapi.ApplyResult) {
	res.Rollback.Performed = true
	err := tx.rollback(entries)
	if err == nil && live {
		if _, _, rerr := a.reloadAndVerify(ctx); rerr != nil {
			err = fmt.Errorf("reload onto the restored files: %w", rerr)
		}
	}
	if err != nil {
		res.Rollback.Message = err.Error()
		a.log.Error("restore failed; the journal stays for the next start", "err", err)
		a.loseBaseline()
		return
	}
	res.Rollback.OK = true
	_ = a.state.Remove(journalFile)
	_ = tx.cleanup()
	if live {
		a.clearOpsMark()
	}
}

// reloadOntoTree brings HAProxy back onto the unchanged tree after the
// ops ran and the files could not be staged. A reload that fails leaves
// the baseline unknown and the ops mark for the next start.
func (a *Agent) reloadOntoTree(ctx context.Context, res *agentapi.ApplyResult) {
	res.Rollback.Performed = true
	if _, _, err := a.reloadAndVerify(ctx); err != nil {
		res.Rollback.Message = fmt.Sprintf("reload onto the unchanged files: %v", err)
		a.log.Error("restore failed; the next start reloads", "err", err)
		a.loseBaseline()
		return
	}
	res.Rollback.OK = true
	a.clearOpsMark()
}

// restoreLive brings HAProxy back onto the unchanged files after runtime
// ops ran and the fallback reload failed: there is nothing to restore on
// disk, so the baseline becomes unknown.
func (a *Agent) restoreLive(_ context.Context, res *agentapi.ApplyResult) {
	res.Rollback.Performed = true
	res.Rollback.Message = "no files changed; runtime ops already ran and the reload failed, so the baseline is unknown"
	a.loseBaseline()
}

// loseBaseline makes the state report no applied plan until an apply
// commits: the tree or HAProxy's runtime state may not be the committed
// set, so the controller must send the full state and a reload.
func (a *Agent) loseBaseline() {
	a.mu.Lock()
	a.baselineUnknown = true
	a.mu.Unlock()
}
