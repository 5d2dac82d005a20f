package rendergate

import (
	"fmt"
	"sort"
	"sync"
)

// DefaultMemory is how many plan verdicts a [Gate] remembers by default.
const DefaultMemory = 256

// Mode is the apply mode of a revert, as the agent contract spells it.
type Mode string

// ModeRevertLKG asks an agent to go back to its last-known-good set.
const ModeRevertLKG Mode = "revert_lkg"

// GateConfig configures a [Gate].
type GateConfig struct {
	// Memory is how many plan IDs' verdicts the gate remembers; the least
	// recently used are forgotten first. Zero means [DefaultMemory].
	Memory int
}

// Gate is the asynchronous validation gate of the design (§6) as a pure
// state machine: no I/O, no goroutines, no clock. It is optimistic (a new
// plan is dispatched at once and validated in the background) until a plan
// is refused; a refusal reverts the pods running that plan and latches the
// gate to validate-before-dispatch until a plan passes.
//
// The caller asks [Gate.Admit] for every rendered plan, runs the checks it
// asks for (for example with a [Runner]) and reports each verdict with
// [Gate.Record]. A Gate is safe for concurrent use; each method is atomic.
type Gate struct {
	mu        sync.Mutex
	verdicts  *verdicts // guarded by mu
	latchedBy string    // guarded by mu; plan ID whose refusal latched the gate, "" when optimistic
}

// Decision says what to do with a rendered plan.
type Decision struct {
	// Dispatch: send the plan to the pods now.
	Dispatch bool
	// Validate: check the plan. When Dispatch is false too, dispatch it
	// only after it passes.
	Validate bool
	// Verdict is what the gate remembers about this plan.
	Verdict Verdict
	// Reason says why, for logs and status.
	Reason string
}

// PodState is one pod as the gate needs it: its name and the plan ID it
// last applied ("" if none).
type PodState struct {
	Pod           string
	AppliedPlanID string
}

// Revert asks for one pod to be sent back to its last-known-good set
// because the plan it applied was refused.
type Revert struct {
	Pod string
	// PlanID is the refused plan the pod runs.
	PlanID string
	Mode   Mode
}

// NewGate returns an optimistic gate with no verdicts.
func NewGate(cfg GateConfig) (*Gate, error) {
	if cfg.Memory < 0 {
		return nil, fmt.Errorf("rendergate: GateConfig.Memory is negative (%d)", cfg.Memory)
	}
	if cfg.Memory == 0 {
		cfg.Memory = DefaultMemory
	}
	return &Gate{verdicts: newVerdicts(cfg.Memory)}, nil
}

// Admit decides what to do with a rendered plan, first match wins:
//   - a plan remembered as refused is neither dispatched nor validated;
//   - a plan remembered as passed is dispatched, and unlatches the gate (a
//     render passed again);
//   - otherwise, when the gate is optimistic, the plan is dispatched and
//     validated in the background;
//   - otherwise (latched) it is validated, to be dispatched after it passes.
func (g *Gate) Admit(planID string) Decision {
	g.mu.Lock()
	defer g.mu.Unlock()
	switch v := g.verdicts.get(planID); {
	case v == VerdictRefused:
		return Decision{Verdict: v, Reason: "plan " + planID + " was refused before"}
	case v == VerdictPass:
		g.latchedBy = ""
		return Decision{Dispatch: true, Verdict: v, Reason: "plan " + planID + " passed before"}
	case g.latchedBy == "":
		return Decision{Dispatch: true, Validate: true, Reason: "optimistic: dispatch now, validate in the background"}
	default:
		return Decision{Validate: true, Reason: "latched by refused plan " + g.latchedBy + ": validate before dispatch"}
	}
}

// Record remembers the verdict of a plan and returns the reverts it calls
// for, sorted by pod. A refusal latches the gate and reverts every pod in
// pods whose applied plan is the refused one. A pass unlatches the gate.
// VerdictUnknown (the check could not run) changes nothing: a broken
// checker neither reverts pods nor blocks dispatch.
func (g *Gate) Record(planID string, v Verdict, pods []PodState) []Revert {
	if v != VerdictPass && v != VerdictRefused {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.verdicts.put(planID, v)
	if v == VerdictPass {
		g.latchedBy = ""
		return nil
	}
	g.latchedBy = planID
	var reverts []Revert
	for _, p := range pods {
		if p.AppliedPlanID == planID {
			reverts = append(reverts, Revert{Pod: p.Pod, PlanID: planID, Mode: ModeRevertLKG})
		}
	}
	sort.Slice(reverts, func(i, j int) bool { return reverts[i].Pod < reverts[j].Pod })
	return reverts
}

// Latched says whether the gate validates before dispatch.
func (g *Gate) Latched() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.latchedBy != ""
}

// LatchedBy returns the ID of the refused plan that latched the gate, or
// "" when the gate is optimistic.
func (g *Gate) LatchedBy() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.latchedBy
}

// Verdict returns the remembered verdict of a plan, VerdictUnknown if it
// was never recorded or has been forgotten. It does not count as a use.
func (g *Gate) Verdict(planID string) Verdict {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.verdicts.peek(planID)
}
