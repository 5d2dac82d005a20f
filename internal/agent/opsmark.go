package agent

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
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

// markFile is the ops mark, kept open once written: every runtime apply
// marks and clears it, and rewriting an open file in place costs a few
// microseconds where creating and removing one cost a few hundred here.
// A cleared mark is blank: spaces over the longest mark written, which
// also pad a shorter mark, so the file never shrinks (truncating costs
// as much as creating). A process killed mid-write cannot tear a
// write(2) in the page cache, so a blank file means no op started.
type markFile struct {
	f    *os.File
	size int
}

// markOps writes the mark for an apply of planID.
func (a *Agent) markOps(planID string) error {
	b, err := json.Marshal(opsMark{PlanID: planID, PrevPlanID: a.appliedPlan()})
	if err != nil {
		return err
	}
	if err := a.mark.write(a.state, b); err != nil {
		return fmt.Errorf("write %s: %w", opsMarkFile, err)
	}
	return nil
}

func (m *markFile) write(root *os.Root, b []byte) error {
	if m.f == nil {
		f, err := root.OpenFile(opsMarkFile, os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			return err
		}
		fi, err := f.Stat()
		if err != nil {
			_ = f.Close()
			return err
		}
		m.f, m.size = f, int(fi.Size())
	}
	if len(b) < m.size {
		b = append(b, bytes.Repeat([]byte{' '}, m.size-len(b))...)
	}
	if _, err := m.f.WriteAt(b, 0); err != nil {
		return err
	}
	m.size = len(b)
	return nil
}

// close closes the file; the mark stays as it is.
func (m *markFile) close() error {
	if m.f == nil {
		return nil
	}
	err := m.f.Close()
	m.f = nil
	return err
}

// clearOpsMark blanks the mark once HAProxy's runtime state matches what
// state.json names again (the apply committed, or a reload restored the
// old set). A mark that cannot be cleared costs one reload at the next
// start, so the error is only logged.
func (a *Agent) clearOpsMark() {
	var err error
	if a.mark.f == nil {
		err = a.removeMarkFile()
	} else {
		_, err = a.mark.f.WriteAt(bytes.Repeat([]byte{' '}, a.mark.size), 0)
	}
	if err != nil {
		a.log.Warn("clear the runtime ops mark; the next start reloads once", "err", err)
	}
}

// recoverOpsMark owes a reload when a mark is left that the committed
// state does not confirm: its ops may have reached HAProxy, and the tree
// is the committed set (the journal, if any, was rolled back first). A
// mark the crash cut short is treated the same way, since the ops may
// have started. It returns whether a reload is owed.
func (a *Agent) recoverOpsMark() (bool, error) {
	b, err := a.state.ReadFile(opsMarkFile)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if len(bytes.TrimSpace(b)) == 0 {
		// Cleared, or created and never written: no op started.
		return false, a.removeMarkFile()
	}
	var m opsMark
	torn := json.Unmarshal(b, &m) != nil
	if err := a.removeMarkFile(); err != nil {
		return false, err
	}
	return torn || m.PlanID != a.durable.AppliedPlanID, nil
}

func (a *Agent) removeMarkFile() error {
	if err := a.state.Remove(opsMarkFile); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}
