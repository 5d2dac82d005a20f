package agentapi

import "github.com/haptic-io/haptic/agentapi/runtimeop"

// The op vocabulary is declared in package runtimeop, which does no I/O
// and which a planner imports without this package's client and handler.
// The names below are the same types and values, so that users of the
// agent contract need one import.

// Op is one typed runtime operation; see [runtimeop.Op].
type Op = runtimeop.Op

// OpKind names what an [Op] does; see [runtimeop.OpKind]. The order of
// the constants is the safe apply order.
type OpKind = runtimeop.OpKind

// Phase is the position of an op kind's group in the safe apply order.
type Phase = runtimeop.Phase

// MapEntry is one key and value of a map.
type MapEntry = runtimeop.MapEntry

// ServerState is an administrative server state.
type ServerState = runtimeop.ServerState

// PendingDelete names a server or a whole backend whose deferred delete
// the agent has not finished.
type PendingDelete = runtimeop.PendingDelete

// Verdict is the planner's hint of how a plan reaches the pod.
type Verdict = runtimeop.Verdict

// Op kinds, in the safe apply order.
const (
	OpAddBackend       = runtimeop.OpAddBackend
	OpAddServer        = runtimeop.OpAddServer
	OpSetServerState   = runtimeop.OpSetServerState
	OpSetServerAddr    = runtimeop.OpSetServerAddr
	OpSetServerWeight  = runtimeop.OpSetServerWeight
	OpEnableHealth     = runtimeop.OpEnableHealth
	OpPublishBackend   = runtimeop.OpPublishBackend
	OpAddMapEntry      = runtimeop.OpAddMapEntry
	OpSetMapEntry      = runtimeop.OpSetMapEntry
	OpReplaceMap       = runtimeop.OpReplaceMap
	OpNewCert          = runtimeop.OpNewCert
	OpSetCert          = runtimeop.OpSetCert
	OpCommitCert       = runtimeop.OpCommitCert
	OpAddCrtListEntry  = runtimeop.OpAddCrtListEntry
	OpDelCrtListEntry  = runtimeop.OpDelCrtListEntry
	OpDelMapEntry      = runtimeop.OpDelMapEntry
	OpUnpublishBackend = runtimeop.OpUnpublishBackend
	OpDelServer        = runtimeop.OpDelServer
	OpDelBackend       = runtimeop.OpDelBackend
)

// Phases, in apply order.
const (
	PhaseAddBackends = runtimeop.PhaseAddBackends
	PhaseServers     = runtimeop.PhaseServers
	PhasePublish     = runtimeop.PhasePublish
	PhaseMapUpserts  = runtimeop.PhaseMapUpserts
	PhaseCerts       = runtimeop.PhaseCerts
	PhaseMapDeletes  = runtimeop.PhaseMapDeletes
	PhaseUnpublish   = runtimeop.PhaseUnpublish
	PhaseDelServers  = runtimeop.PhaseDelServers
	PhaseDelBackends = runtimeop.PhaseDelBackends
)

// Server states.
const (
	StateReady = runtimeop.StateReady
	StateDrain = runtimeop.StateDrain
	StateMaint = runtimeop.StateMaint
)

// Verdicts.
const (
	VerdictNoop     = runtimeop.VerdictNoop
	VerdictFileOnly = runtimeop.VerdictFileOnly
	VerdictRuntime  = runtimeop.VerdictRuntime
	VerdictReload   = runtimeop.VerdictReload
)

// MaxGUIDLen is HAProxy's limit on a guid, in bytes.
const MaxGUIDLen = runtimeop.MaxGUIDLen

// ErrUnknownOpKind is returned for an op kind this version does not know.
var ErrUnknownOpKind = runtimeop.ErrUnknownOpKind

// ErrInvalidOp is wrapped by every [Op.Validate] failure.
var ErrInvalidOp = runtimeop.ErrInvalidOp

// OpKinds returns every op kind, in the safe apply order; see
// [runtimeop.OpKinds].
func OpKinds() []OpKind { return runtimeop.OpKinds() }

// ParseOpKind returns the kind with the given wire name.
func ParseOpKind(s string) (OpKind, error) { return runtimeop.ParseOpKind(s) }

// DecodeOps decodes a JSON array of ops strictly; see
// [runtimeop.DecodeOps].
func DecodeOps(b []byte) ([]Op, error) { return runtimeop.DecodeOps(b) }
