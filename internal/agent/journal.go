package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/haptic-io/haptic/renderplan"
)

// journal is the durable record of a file swap in progress. It is
// written, and made durable in one pass with the staged bodies and the
// hard links of the old files, before the first rename into the tree; it is
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

// txn is one file transaction. Its files lie flat in BaseDir/.haptic-txn,
// named after the transaction and the index of their entry in the
// journal: <id>.n<i> is the staged new body of entry i, <id>.o<i> the
// backup of its old file. Flat names cost no directory creation per
// apply and leave one directory to sync for the backups.
type txn struct {
	id   string
	base *os.Root // BaseDir
}

func (t *txn) name(kind string, i int) string {
	return txnDirName + "/" + t.id + "." + kind + strconv.Itoa(i)
}
func (t *txn) newPath(i int) string { return t.name("n", i) }
func (t *txn) oldPath(i int) string { return t.name("o", i) }

// stage writes every new body into sync; the caller flushes
// it with the backups and the journal before the swap. The staged
// files' data must be durable before the state can name them (a committed
// tree is never rewritten), and flushing it before the swap costs nothing
// extra. The staging directories themselves are not synced: the names
// that matter are the ones the swap renames into the tree.
//
// It returns the stamp of each staged file by its tree path, with the
// digest files gives it (the body was checked against it): the swap's
// renames keep the inode and the modification time, so once the swap is
// committed the stamps let the next apply's [hashTreeCached] skip reading
// back what this one wrote.
func (t *txn) stage(sync *syncSet, bodies map[string][]byte, entries []journalEntry, files manifest) (map[string]stamp, error) {
	stamps := make(map[string]stamp, len(entries))
	for i, e := range entries {
		if !e.New {
			continue
		}
		f, err := sync.writeFile(t.base, t.newPath(i), bodies[e.Path])
		if err != nil {
			return nil, fmt.Errorf("stage %s: %w", e.Path, err)
		}
		if st, ok := stampOf(f, files[e.Path]); ok {
			stamps[e.Path] = st
		}
	}
	return stamps, nil
}

// backup hard-links each old file the swap replaces or deletes into the
// transaction directory and adds it (and BaseDir, which may just have
// got it) to sync. The links keep the old inodes alive after
// the renames; they must be durable before the first rename, since a
// rollback after a crash puts them back.
func (t *txn) backup(sync *syncSet, entries []journalEntry) error {
	if err := sync.mkdirAll(t.base, txnDirName); err != nil {
		return fmt.Errorf("back up: %w", err)
	}
	for i, e := range entries {
		if !e.Old {
			continue
		}
		if err := t.base.Link(e.Path, t.oldPath(i)); err != nil {
			return fmt.Errorf("back up %s: %w", e.Path, err)
		}
	}
	return nil
}

// writeJournal writes j to journalFile under root into sync. It is
// written in place, not through a temp file and a rename: a journal is
// only acted on after sync's flush returned (the swap starts after it),
// so a journal that a crash left empty or torn belongs to an apply that
// never touched the tree, and recovery discards it (see [Agent.recover]).
func writeJournal(sync *syncSet, root *os.Root, j journal) error {
	b, err := json.Marshal(j)
	if err != nil {
		return err
	}
	if _, err := sync.writeFile(root, journalFile, b); err != nil {
		return fmt.Errorf("write journal: %w", err)
	}
	sync.dir(root, ".")
	return nil
}

// swap moves the staged files into the tree and deletes the removed
// ones, in the order of entries (swapOrder: haproxy.cfg last), and adds the touched directories (with any
// created, up to BaseDir) to treeDirs. It does not sync them: until the
// commit point a crash rolls the tree back from the journal whichever
// renames survived, so they need to be durable only before the commit,
// which syncs treeDirs with the state. step is called before each rename
// (a crash hook in tests).
func (t *txn) swap(treeDirs *syncSet, entries []journalEntry, step func(string)) error {
	for i, e := range entries {
		step("swap:" + e.Path)
		dir := path.Dir(e.Path)
		if e.New {
			if err := treeDirs.mkdirAll(t.base, dir); err != nil {
				return fmt.Errorf("swap %s: %w", e.Path, err)
			}
			if err := t.base.Rename(t.newPath(i), e.Path); err != nil {
				return fmt.Errorf("swap %s: %w", e.Path, err)
			}
		} else if err := t.base.Remove(e.Path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("remove %s: %w", e.Path, err)
		}
		treeDirs.dir(t.base, dir)
	}
	return nil
}

// rollback puts every old file back and deletes every file the swap
// added. It is idempotent: the backups stay until cleanup, and each
// restore goes through a fresh link and a rename.
func (t *txn) rollback(entries []journalEntry) error {
	var errs []error
	dirs := map[string]bool{}
	tmp := t.name("r", 0)
	for i, e := range entries {
		if e.Old {
			_ = t.base.Remove(tmp)
			if dir := path.Dir(e.Path); dir != "." {
				if err := t.base.MkdirAll(dir, 0o755); err != nil {
					errs = append(errs, fmt.Errorf("restore %s: %w", e.Path, err))
					continue
				}
			}
			if err := t.base.Link(t.oldPath(i), tmp); err != nil {
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

// cleanup removes the transaction's files.
func (t *txn) cleanup() error {
	des, err := fs.ReadDir(t.base.FS(), txnDirName)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var errs []error
	for _, de := range des {
		if strings.HasPrefix(de.Name(), t.id+".") {
			if err := t.base.Remove(txnDirName + "/" + de.Name()); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

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
