package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
)

// opsMarkFile records, in StateDir, that an apply is about to change
// HAProxy's runtime state before its files are staged (see
// [Agent.apply]): a crash between the ops and the commit would otherwise
// leave HAProxy serving a plan that neither the tree nor state.json
// names, with no journal to say so. Recovery answers a mark the state
// does not confirm with a reload onto the committed tree.
//
// The mark is written but not synced. A killed agent leaves it in the
// page cache for the next one; a power loss or kernel crash, which could
// lose it, also ends HAProxy and its runtime state, and HAProxy then
// starts from the committed tree.
const opsMarkFile = "ops.json"

// opsMark is the content of opsMarkFile.
type opsMark struct {
	PlanID     string `json:"planID"`
	PrevPlanID string `json:"prevPlanID,omitempty"`
}

// markOps writes the mark for an apply of planID.
func (a *Agent) markOps(planID string) error {
	b, err := json.Marshal(opsMark{PlanID: planID, PrevPlanID: a.appliedPlan()})
	if err != nil {
		return err
	}
	if err := a.state.WriteFile(opsMarkFile, b, 0o600); err != nil {
		return fmt.Errorf("write %s: %w", opsMarkFile, err)
	}
	return nil
}

// clearOpsMark removes the mark once HAProxy's runtime state matches what
// state.json names again (the apply committed, or a reload restored the
// old set). A mark that cannot be removed costs one reload at the next
// start, so the error is only logged.
func (a *Agent) clearOpsMark() {
	if err := a.state.Remove(opsMarkFile); err != nil && !errors.Is(err, fs.ErrNotExist) {
		a.log.Warn("remove the runtime ops mark; the next start reloads once", "err", err)
	}
}

// recoverOpsMark owes a reload when a mark is left that the committed
// state does not confirm: its ops may have reached HAProxy, and the tree
// is the committed set (the journal, if any, was rolled back first). A
// mark the crash cut short is treated the same way, since the ops may
// have started. It returns whether a reload is owed.
func (a *Agent) recoverOpsMark() (bool, error) {
	var m opsMark
	found, err := readJSON(a.state, opsMarkFile, &m)
	var syntax *json.SyntaxError
	torn := errors.As(err, &syntax)
	if err != nil && !torn {
		return false, err
	}
	if !found && !torn {
		return false, nil
	}
	if err := a.state.Remove(opsMarkFile); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, err
	}
	return torn || m.PlanID != a.durable.AppliedPlanID, nil
}
