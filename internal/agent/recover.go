package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
)

// reasonRecovery marks the reload a crash recovery owes.
const reasonRecovery = "recovery: an interrupted apply may have reached HAProxy; reloading onto the committed tree"

// recover loads the durable state and finishes an apply a crash
// interrupted. A journal whose transaction the state already names was
// committed: only its cleanup is left (roll forward). Any other journal
// is rolled back to the old files, and since its ops or reload may have
// reached HAProxy, a reload onto the old files is owed (Run or the next
// Apply performs it). So does an ops mark the state does not confirm
// (see opsMarkFile): the ops of an apply that ran them before staging.
// Staging left without a journal is discarded. A committed apply whose
// paced reload had not run yet owes that reload.
func (a *Agent) recover() error {
	if _, err := readJSON(a.state, stateFile, &a.durable); err != nil {
		return err
	}
	var j journal
	found, err := readJSON(a.state, journalFile, &j)
	var syntax *json.SyntaxError
	if errors.As(err, &syntax) {
		// The journal is written in place and acted on only once it is
		// durable (the swap starts after its sync): one that does not
		// decode was cut short by a crash before any rename into the
		// tree. Its staging is discarded below; the drift check at the
		// end still compares the tree with the committed manifest.
		a.log.Warn("recovery: discarding a journal a crash cut short before the swap", "err", err)
		if err := a.state.Remove(journalFile); err != nil {
			return err
		}
		found, err = false, nil
	}
	if err != nil {
		return err
	}
	if found {
		tx := &txn{id: j.Txn, base: a.base}
		if j.Txn != "" && j.Txn == a.durable.Txn {
			a.log.Info("recovery: the interrupted apply was committed; finishing it", "plan_id", j.PlanID)
		} else {
			a.log.Warn("recovery: rolling back an interrupted apply", "plan_id", j.PlanID, "files", len(j.Entries))
			if err := tx.rollback(j.Entries); err != nil {
				return fmt.Errorf("roll back %s: %w", j.Txn, err)
			}
			a.reloadDue, a.reloadReason = true, reasonRecovery
		}
		if err := a.state.Remove(journalFile); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	owed, err := a.recoverOpsMark()
	if err != nil {
		return fmt.Errorf("read %s: %w", opsMarkFile, err)
	}
	if owed {
		a.log.Warn("recovery: an interrupted apply ran runtime ops; reloading onto the committed tree")
		a.reloadDue, a.reloadReason = true, reasonRecovery
	}
	if err := a.base.RemoveAll(txnDirName); err != nil {
		return fmt.Errorf("clean staging: %w", err)
	}
	a.pruneLKG(a.durable.LKGDir)
	if a.durable.ReloadPending && !a.reloadDue {
		a.reloadDue, a.reloadReason = true, "scheduled before a restart"
	}
	if a.durable.AppliedPlanID != "" {
		// What the tree holds now, not what was committed, is what the
		// state reports: someone may have written it while the agent was
		// down (a supervisor's bootstrap config, a person).
		if got, err := hashTree(a.base); err != nil || !got.equal(a.durable.Manifest) {
			a.drifted, a.disk = true, got
		}
	}
	return nil
}
