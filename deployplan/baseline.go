package deployplan

import (
	"github.com/haptic-io/haptic/agentapi/runtimeop"
	"github.com/haptic-io/haptic/renderplan"
)

// Baseline is what one pod runs, as far as the controller knows.
type Baseline struct {
	// Plan is the plan the pod last applied; nil means unknown (a new pod,
	// a drifted tree), which forces a reload with the full state.
	Plan *renderplan.Plan
	// HAProxyVersion is the pod's HAProxy version as it reports it
	// ("3.4.7-1") or a series ("3.4"); see [CapabilitiesFor].
	HAProxyVersion string
	// AgentOps are the op kinds the pod's agent executes. Nil or empty
	// means unknown, which forces a reload; an op of a kind outside the
	// list forces a reload too.
	AgentOps []runtimeop.OpKind
	// PendingDeletes are servers and backends the agent still waits to
	// delete, as it reports them in its state (agentapi.State.PendingDeletes): they
	// exist in HAProxy although Plan no longer has them.
	PendingDeletes []runtimeop.PendingDelete
	// MaxOps bounds the ops of one apply; 0 means [DefaultMaxOps]. A
	// larger change reloads.
	MaxOps int
}
