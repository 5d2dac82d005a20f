package agentapi

import (
	"encoding/json"
	"time"

	"github.com/haptic-io/haptic/renderplan"
)

// APIVersion names this version of the agent wire contract. An agent
// reports it in [State.APIVersion].
const APIVersion = "haptic.agent/v1"

// MaxStateOpResults bounds the op results of [State.LastApply].
const MaxStateOpResults = 16

// State is what an agent reports about itself and the HAProxy it drives
// (GET /v1/state). The controller builds a pod's baseline from it. A State
// is a plain value; the agent returns a fresh one on every call.
type State struct {
	// APIVersion is [APIVersion] for agents of this contract.
	APIVersion string `json:"apiVersion"`
	// AgentVersion is the agent binary's version, for people.
	AgentVersion string `json:"agentVersion"`
	// OpKinds are the op kinds the agent executes, in apply order. A
	// controller sends only these and falls back to a reload for the
	// rest. Decoding drops kind names this side does not know.
	OpKinds []OpKind `json:"opKinds"`
	// HAProxyVersion is HAProxy's version as "show info" reports it
	// ("3.4.7-1"); empty while HAProxy is not reachable.
	HAProxyVersion string `json:"haproxyVersion"`
	// Worker identifies the current HAProxy worker; a change of PID or
	// start time means HAProxy restarted or reloaded.
	Worker Worker `json:"worker"`
	// AppliedPlanID is the plan the files on disk and the running HAProxy
	// carry; empty before the first apply or when unknown.
	AppliedPlanID string `json:"appliedPlanID,omitempty"`
	// LastKnownGoodPlanID is the last plan committed as good, the one
	// [ModeRevertLKG] restores.
	LastKnownGoodPlanID string `json:"lastKnownGoodPlanID,omitempty"`
	// Fence is the highest fencing token the agent has accepted; an apply
	// must carry one at least as high.
	Fence uint64 `json:"fence"`
	// Files maps each file path on disk (relative to the HAProxy base
	// directory) to its digest, [renderplan.DigestOf] of its bytes. A
	// manifest file with the same digest needs no body.
	Files map[string]renderplan.Digest `json:"files,omitempty"`
	// PendingDeletes are servers and backends whose deferred delete has
	// not finished: HAProxy still has them although the applied plan does
	// not. Sorted by backend, then server.
	PendingDeletes []PendingDelete `json:"pendingDeletes,omitempty"`
	// Drifted says the files on disk no longer match the applied plan
	// (someone changed them): the controller must send the full state and
	// a reload.
	Drifted bool `json:"drifted,omitempty"`
	// LastApply is the result of the last apply, nil before the first.
	// Its Ops are cut to the first [MaxStateOpResults] and every failed
	// one after them: an apply of thousands of ops would otherwise make
	// every state read that follows it megabytes long, and the state is
	// read before each apply. The apply's own answer has them all.
	LastApply *ApplyResult `json:"lastApply,omitempty"`
	// LastApplyOps is the number of op results of the last apply, cut or
	// not.
	LastApplyOps int `json:"lastApplyOps,omitempty"`
	// BodyPatches says the agent takes a changed file as a [Patch] of the
	// file it has ([ApplyRequest.Patches]). A controller sends patches
	// only to an agent that says so.
	BodyPatches bool `json:"bodyPatches,omitempty"`
	// ReloadPending says a reload is scheduled (the pacing deferred the
	// one an apply needed) or owed (a recovery): HAProxy does not serve
	// the applied plan's configuration yet. It clears once the reload ran.
	ReloadPending bool `json:"reloadPending,omitempty"`
}

// Worker identifies one HAProxy worker process.
type Worker struct {
	// PID is the worker's process ID; 0 when unknown.
	PID int `json:"pid"`
	// StartedAt is when the worker started, as the master reports it;
	// zero when unknown.
	StartedAt time.Time `json:"startedAt,omitzero"`
}

// UnmarshalJSON decodes a state leniently, so that an older controller
// reads a newer agent: unknown fields are ignored and op kind names this
// side does not know are dropped from OpKinds.
func (s *State) UnmarshalJSON(b []byte) error {
	type plain State
	var v struct {
		plain
		OpKinds []string `json:"opKinds"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*s = State(v.plain)
	s.OpKinds = nil
	for _, name := range v.OpKinds {
		if k, err := ParseOpKind(name); err == nil {
			s.OpKinds = append(s.OpKinds, k)
		}
	}
	return nil
}

// Supports reports whether the agent advertises op kind k.
func (s *State) Supports(k OpKind) bool {
	for _, have := range s.OpKinds {
		if have == k {
			return true
		}
	}
	return false
}
