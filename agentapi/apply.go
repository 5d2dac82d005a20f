package agentapi

import (
	"context"
	"time"

	"github.com/haptic-io/haptic/renderplan"
)

// Applier is what serves the agent contract: the agent runtime
// implements it, [NewHandler] serves one over HTTP and [Client] is one
// that talks to a remote agent, so a dispatcher can be handed either.
// Implementations must be safe for concurrent use; Apply runs one
// transaction at a time.
type Applier interface {
	// State reports the agent's state.
	State(ctx context.Context) (*State, error)
	// Apply runs one apply transaction. It returns the result on an ACK.
	// On a NACK the error is a *[NackError] whose Result holds what was
	// done, and the returned result is that same Result (or nil). Any
	// other error means the transaction could not be attempted.
	Apply(ctx context.Context, req *ApplyRequest) (*ApplyResult, error)
}

// ReadyChecker is an optional interface of an [Applier]: the handler's
// GET /readyz calls Ready and answers 503 with its error. An Applier
// without it is ready as soon as it serves.
type ReadyChecker interface {
	Ready(ctx context.Context) error
}

// Mode says how the agent applies a request.
type Mode string

// Apply modes.
const (
	// ModeAuto applies files and ops and reloads when the verdict says so
	// or as the fallback for a failed op. The empty Mode means ModeAuto.
	ModeAuto Mode = "auto"
	// ModeReload writes the files and reloads, whatever the verdict; ops
	// are not run (the reload carries them).
	ModeReload Mode = "reload"
	// ModeRevertLKG restores the agent's last-known-good set and reloads.
	// The request carries no files and no ops; PlanID, when set, must be
	// the agent's last-known-good plan ID.
	ModeRevertLKG Mode = "revert_lkg"
)

// ApplyRequest is one apply (POST /v1/apply): the manifest, which
// encodes to JSON, and the bodies of the files that changed. The agent
// reloads when Mode is [ModeReload] or Verdict is [VerdictReload], or as
// the fallback when an op fails. A request is a plain value; the handler
// builds a fresh one per call and the Applier must not keep Bodies after
// Apply returns.
type ApplyRequest struct {
	// PlanID is the ID of the plan the files and ops bring the pod to;
	// required except for [ModeRevertLKG].
	PlanID string `json:"planID,omitempty"`
	// ExpectedPlanID, when set, is the plan the controller believes the
	// pod runs: the agent refuses (StageFence) if it runs another. Empty
	// means no expectation (a full-state apply).
	ExpectedPlanID string `json:"expectedPlanID,omitempty"`
	// Fence is the controller's fencing token. It only moves forward: the
	// agent refuses (StageFence) a token lower than the highest it has
	// accepted ([State.Fence]).
	Fence uint64 `json:"fence"`
	// Mode is how to apply; empty means [ModeAuto].
	Mode Mode `json:"mode,omitempty"`
	// Verdict is the planner's hint; empty means [VerdictReload] (the
	// agent has nothing better to go on).
	Verdict Verdict `json:"verdict,omitempty"`
	// Files lists every file of the new tree (path, kind, digest, size),
	// each path once. Files on disk that it does not list are deleted.
	Files []renderplan.File `json:"files"`
	// Ops are the runtime ops, in apply order.
	Ops []Op `json:"ops,omitempty"`
	// Bodies holds the bytes of the files that changed, by path. A file
	// listed in Files without a body must already be on disk with its
	// digest; every body must match its file's digest and size. Bodies
	// travel after the manifest (see [ContentTypeApply]), never in the
	// manifest JSON.
	Bodies map[string][]byte `json:"-"`
	// Patches holds, by path, changed files sent as their difference from
	// the file the agent has (see [Patch]); a path has a body or a patch,
	// not both. Only agents whose [State.BodyPatches] is set take them,
	// and only in the framed format. The agent rebuilds each body and
	// checks it against its file's digest and size before it writes it.
	Patches map[string]Patch `json:"-"`
}

// checkedKey is the context key under which the handler passes the
// request whose bodies it checked.
type checkedKey struct{}

// withBodiesChecked returns ctx saying that req's bodies were checked.
func withBodiesChecked(ctx context.Context, req *ApplyRequest) context.Context {
	return context.WithValue(ctx, checkedKey{}, req)
}

// BodiesChecked reports whether ctx is the context the handler of
// [NewHandler] called [Applier.Apply] with for req, which it built and
// whose every body it checked against its file's size and digest: the
// Applier may then skip hashing the bodies again. Any other request or
// context (an in-process call, a test) reports false, and whoever applies
// the request must check it. An Applier that changes req.Bodies must not
// rely on it.
func BodiesChecked(ctx context.Context, req *ApplyRequest) bool {
	r, _ := ctx.Value(checkedKey{}).(*ApplyRequest)
	return r != nil && r == req
}

// ApplyResult is the outcome of one apply: an ACK (OK) or a NACK with the
// failing stage and message, plus what happened on the way.
type ApplyResult struct {
	// PlanID is the plan the request carried (for ModeRevertLKG, the plan
	// restored).
	PlanID string `json:"planID,omitempty"`
	// OK is true for an ACK.
	OK bool `json:"ok"`
	// Stage and Message describe a NACK, as in [NackError].
	Stage   Stage  `json:"stage,omitempty"`
	Message string `json:"message,omitempty"`
	// Ops has one result per op that ran, in order. A refused op stops
	// the apply after the round trip it shared with its neighbours: those
	// after it in that batch ran and have results, later ones did not
	// and are absent.
	Ops []OpResult `json:"ops,omitempty"`
	// Reload says whether a reload ran and how it went.
	Reload ReloadInfo `json:"reload"`
	// Rollback says whether the old file set was restored and how.
	Rollback RollbackInfo `json:"rollback"`
	// Timings holds the time spent in each stage that ran, encoded in
	// nanoseconds.
	Timings map[Stage]time.Duration `json:"timings,omitempty"`
	// Took is the whole apply's duration, in nanoseconds on the wire.
	Took time.Duration `json:"took"`
}

// OpResult is the outcome of one op.
type OpResult struct {
	// Index is the op's index in [ApplyRequest.Ops].
	Index int `json:"index"`
	// Op is the op in its [Op.String] form.
	Op string `json:"op"`
	// OK reports whether HAProxy accepted every command of the op.
	OK bool `json:"ok"`
	// Reply is HAProxy's reply, verbatim (empty replies stay empty).
	Reply string `json:"reply,omitempty"`
}

// ReloadInfo describes the reload of one apply.
type ReloadInfo struct {
	// Performed is true when the agent reloaded HAProxy during the apply.
	Performed bool `json:"performed"`
	// Scheduled is true when a needed reload was deferred by the reload
	// pacing (minDeploymentInterval); it runs later, never dropped.
	Scheduled bool `json:"scheduled,omitempty"`
	// OK is true when the reload succeeded and the new worker verified.
	OK bool `json:"ok"`
	// Reason says why the agent reloaded ("mode reload", "verdict
	// reload", "fallback: op 3 failed").
	Reason string `json:"reason,omitempty"`
	// Took is the reload and verification time.
	Took time.Duration `json:"took,omitempty"`
	// NewWorkerPID is the PID of the worker the reload started.
	NewWorkerPID int `json:"newWorkerPID,omitempty"`
}

// RollbackInfo describes the restore of the old file set after a failure.
type RollbackInfo struct {
	// Performed is true when the agent restored the journal.
	Performed bool `json:"performed"`
	// OK is true when the restore succeeded.
	OK bool `json:"ok"`
	// Message is the restore's error, if any.
	Message string `json:"message,omitempty"`
}
