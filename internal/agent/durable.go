package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"
)

// durableState is what survives a restart: the committed plan and its
// manifest, the newest fencing token seen, and when the last-known-good
// set was taken. It is written atomically (temp file, fsync, rename,
// directory fsync); its write is the commit point of an apply.
type durableState struct {
	// Txn is the transaction that wrote this state; recovery compares it
	// with the journal's to tell a committed apply from an interrupted one.
	Txn           string   `json:"txn,omitempty"`
	AppliedPlanID string   `json:"appliedPlanID,omitempty"`
	Manifest      manifest `json:"manifest,omitempty"`
	NewestToken   uint64   `json:"newestToken,omitempty"`
	// LKGDir names the last-known-good set in StateDir (see lkg.go);
	// LKGPlanID and LKGFiles describe it; LKGAt is when it was taken.
	LKGDir    string    `json:"lkgDir,omitempty"`
	LKGPlanID string    `json:"lkgPlanID,omitempty"`
	LKGFiles  manifest  `json:"lkgFiles,omitempty"`
	LKGAt     time.Time `json:"lkgAt,omitzero"`
	// ReloadPending says a paced reload was scheduled and has not run.
	ReloadPending bool `json:"reloadPending,omitempty"`
}

const stateFile = "state.json"

// readJSON decodes name under root into v; a missing file leaves v alone
// and returns false.
func readJSON(root *os.Root, name string, v any) (bool, error) {
	b, err := root.ReadFile(name)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return false, fmt.Errorf("decode %s: %w", name, err)
	}
	return true, nil
}

// writeJSONAtomic encodes v into name under root durably: it writes a
// temp file, makes it durable together with everything in pre (nil: no
// more) in one pass, renames it over name and fsyncs the directory. The
// two syncs are both needed: the temp file's data must be durable before
// the rename can be (else a crash could leave name empty or torn), and the
// rename is the point the write becomes visible after a crash. Whatever
// pre holds is durable before name changes, so a caller uses pre for what
// the new content of name relies on (the tree a committed state names).
// The directory fsync also makes every earlier removal in root durable
// (such as the previous apply's journal).
func writeJSONAtomic(root *os.Root, name string, v any, pre *syncSet) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if pre == nil {
		pre = &syncSet{}
	}
	tmp := name + ".tmp"
	if _, err := pre.writeFile(root, tmp, b); err != nil {
		pre.discard()
		return fmt.Errorf("write %s: %w", tmp, err)
	}
	if err := pre.flush(); err != nil {
		return fmt.Errorf("write %s: %w", tmp, err)
	}
	if err := root.Rename(tmp, name); err != nil {
		return fmt.Errorf("rename %s: %w", tmp, err)
	}
	if err := syncDir(root, "."); err != nil {
		return fmt.Errorf("sync state dir: %w", err)
	}
	return nil
}

// commitStateLocked makes next durable: when lkg is set and next's
// applied set is not already the last-known-good one, it first links the
// tree into a new set and names it in next; then it writes state.json
// (the commit point) and prunes the sets next no longer names. pre (nil:
// none) holds what must be durable before the commit point: the tree
// directories the apply's swap renamed into, since a committed state is
// only rolled forward, never redone. The new set's directories join it.
// applyMu must be held.
func (a *Agent) commitStateLocked(next durableState, lkg bool, id string, pre *syncSet) (durableState, error) {
	if pre == nil {
		pre = &syncSet{}
	}
	old := next.LKGDir
	current := next.LKGDir != "" && next.LKGPlanID == next.AppliedPlanID && next.LKGFiles.equal(next.Manifest)
	if lkg && !current {
		if id == "" {
			a.mu.Lock()
			a.seq++
			id = fmt.Sprintf("%d-%d", a.cfg.Now().UnixNano(), a.seq)
			a.mu.Unlock()
		}
		dir, err := a.linkLKG(id, next.Manifest, pre)
		if err != nil {
			a.log.Error("save last-known-good set; keeping the previous one", "plan_id", next.AppliedPlanID, "err", err)
		} else {
			next.LKGDir, next.LKGPlanID, next.LKGFiles, next.LKGAt = dir, next.AppliedPlanID, next.Manifest, a.cfg.Now()
		}
	}
	if err := writeJSONAtomic(a.state, stateFile, next, pre); err != nil {
		if next.LKGDir != old {
			_ = a.state.RemoveAll(next.LKGDir)
		}
		return next, err
	}
	a.mu.Lock()
	a.durable = next
	a.mu.Unlock()
	if next.LKGDir != old {
		a.pruneLKG(next.LKGDir)
	}
	return next, nil
}
