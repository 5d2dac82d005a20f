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

func (a *Agent) writeOpsMark(m opsMark) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	if err := a.state.WriteFile(opsMarkFile, b, 0o600); err != nil {
		return fmt.Errorf("write %s: %w", opsMarkFile, err)
	}
	return nil
}

// pendingMark is an ops mark being written in the background while the
// apply checks its files: creating a file costs a few hundred
// microseconds here, about what the check costs, and neither needs the
// other. The first op waits for it.
type pendingMark struct {
	a    *Agent
	done chan struct{} // closed when the write returned
	err  error         // the write's error, once done is closed
}

// startOpsMark starts writing the mark for an apply of planID.
func (a *Agent) startOpsMark(planID string) *pendingMark {
	m := &pendingMark{a: a, done: make(chan struct{})}
	mark := opsMark{PlanID: planID, PrevPlanID: a.appliedPlan()}
	go func() {
		defer close(m.done)
		m.err = a.writeOpsMark(mark)
	}()
	return m
}

// wait returns once the mark is written, with the write's error.
func (m *pendingMark) wait() error {
	<-m.done
	return m.err
}

// abandon waits for the write and removes the mark: the apply was
// refused before any op ran. A nil mark is allowed.
func (m *pendingMark) abandon() {
	if m == nil {
		return
	}
	if m.wait() == nil {
		m.a.clearOpsMark()
	}
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
