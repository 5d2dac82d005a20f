package agent

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"sort"

	"github.com/haptic-io/haptic/renderplan"
)

// journal is the durable record of a file swap in progress. It is
// written (fsynced) after the new bodies are staged and the old files are
// hard-linked aside, and before the first rename into the tree; it is
// removed once the apply is committed or rolled back. A journal found at
// start means the agent died in between: [Agent.recover] rolls the tree
// back to the old files (or forward, when the state already names the
// journal's transaction).
type journal struct {
	Txn        string         `json:"txn"`
	PlanID     string         `json:"planID"`
	PrevPlanID string         `json:"prevPlanID,omitempty"`
	Entries    []journalEntry `json:"entries"`
}

// journalEntry is one path of the swap. Old says the tree had a file
// there (backed up under the transaction's old/ directory); New says the
// apply writes one (staged under new/); an entry without New deletes.
type journalEntry struct {
	Path string `json:"path"`
	Old  bool   `json:"old,omitempty"`
	New  bool   `json:"new,omitempty"`
}

const journalFile = "journal.json"

// txn is one file transaction inside BaseDir/.haptic-txn/<id>.
type txn struct {
	id   string
	base *os.Root // BaseDir
	dir  string   // relative to base: .haptic-txn/<id>
}

func (t *txn) newPath(p string) string { return path.Join(t.dir, "new", p) }
func (t *txn) oldPath(p string) string { return path.Join(t.dir, "old", p) }

// stage writes every new body under new/ and fsyncs it. The staging
// directories are not fsynced: the names that matter are the ones the
// swap renames into the tree, whose directories it fsyncs.
func (t *txn) stage(bodies map[string][]byte, entries []journalEntry) error {
	for _, e := range entries {
		if !e.New {
			continue
		}
		if err := writeFileSync(t.base, t.newPath(e.Path), bodies[e.Path]); err != nil {
			return fmt.Errorf("stage %s: %w", e.Path, err)
		}
	}
	return nil
}

// backup hard-links each old file the swap replaces or deletes under
// old/. The links keep the old inodes alive after the renames.
func (t *txn) backup(entries []journalEntry) error {
	dirs := map[string]bool{}
	for _, e := range entries {
		if !e.Old {
			continue
		}
		p := t.oldPath(e.Path)
		if err := t.base.MkdirAll(path.Dir(p), 0o755); err != nil {
			return fmt.Errorf("back up %s: %w", e.Path, err)
		}
		if err := t.base.Link(e.Path, p); err != nil {
			return fmt.Errorf("back up %s: %w", e.Path, err)
		}
		dirs[path.Dir(p)] = true
	}
	return syncDirs(t.base, dirs)
}

// swap moves the staged files into the tree and deletes the removed
// ones, haproxy.cfg last, then fsyncs the touched directories. step is
// called before each rename (a crash hook in tests).
func (t *txn) swap(entries []journalEntry, step func(string)) error {
	dirs := map[string]bool{}
	for _, e := range swapOrder(entries) {
		step("swap:" + e.Path)
		if e.New {
			if dir := path.Dir(e.Path); dir != "." {
				if err := t.base.MkdirAll(dir, 0o755); err != nil {
					return fmt.Errorf("swap %s: %w", e.Path, err)
				}
			}
			if err := t.base.Rename(t.newPath(e.Path), e.Path); err != nil {
				return fmt.Errorf("swap %s: %w", e.Path, err)
			}
		} else if err := t.base.Remove(e.Path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("remove %s: %w", e.Path, err)
		}
		dirs[path.Dir(e.Path)] = true
	}
	return syncDirs(t.base, dirs)
}

// rollback puts every old file back and deletes every file the swap
// added. It is idempotent: the backups stay until cleanup, and each
// restore goes through a fresh link and a rename.
func (t *txn) rollback(entries []journalEntry) error {
	var errs []error
	dirs := map[string]bool{}
	for _, e := range entries {
		if e.Old {
			tmp := path.Join(t.dir, "restore.tmp")
			_ = t.base.Remove(tmp)
			if dir := path.Dir(e.Path); dir != "." {
				if err := t.base.MkdirAll(dir, 0o755); err != nil {
					errs = append(errs, fmt.Errorf("restore %s: %w", e.Path, err))
					continue
				}
			}
			if err := t.base.Link(t.oldPath(e.Path), tmp); err != nil {
				errs = append(errs, fmt.Errorf("restore %s: %w", e.Path, err))
				continue
			}
			if err := t.base.Rename(tmp, e.Path); err != nil {
				errs = append(errs, fmt.Errorf("restore %s: %w", e.Path, err))
				continue
			}
		} else if err := t.base.Remove(e.Path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, fmt.Errorf("remove %s: %w", e.Path, err))
			continue
		}
		dirs[path.Dir(e.Path)] = true
	}
	if err := syncDirs(t.base, dirs); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// cleanup removes the transaction directory.
func (t *txn) cleanup() error { return t.base.RemoveAll(t.dir) }

// swapOrder returns entries with haproxy.cfg last, the rest by path.
func swapOrder(entries []journalEntry) []journalEntry {
	out := append([]journalEntry(nil), entries...)
	sort.SliceStable(out, func(i, j int) bool {
		ci, cj := out[i].Path == renderplan.ConfigPath, out[j].Path == renderplan.ConfigPath
		if ci != cj {
			return cj
		}
		return out[i].Path < out[j].Path
	})
	return out
}

func syncDirs(root *os.Root, dirs map[string]bool) error {
	for d := range dirs {
		if err := syncDir(root, d); err != nil {
			return fmt.Errorf("sync %s: %w", d, err)
		}
	}
	return nil
}
