package agent

import (
	"errors"
	"fmt"
	"os"
	"path"
)

// syncSet gathers the files and directories one durable point of an
// apply needs, and makes them durable together in [syncSet.flush].
//
// Why batch: on ext4 and XFS every fsync that finds dirty metadata forces
// a journal commit (a device cache flush), and one commit carries every
// metadata change made before it. Syncing file by file, each write
// followed by its fsync, costs one commit per file; writing everything
// first, starting the writeback of every file's data, and only then
// syncing, lets the first fsync commit the lot and the later ones find
// nothing left to commit. Every file and directory the recovery argument
// needs is still synced explicitly, so this relies on no filesystem
// ordering beyond what fsync promises.
type syncSet struct {
	files []*os.File
	dirs  map[dirKey]bool
}

type dirKey struct {
	root *os.Root
	dir  string
}

// writeFile writes b to p under root (creating parent directories) and
// keeps the file open for flush. Its directory is not added: a caller
// whose file name must survive a crash adds it (see [syncSet.dir]). The
// file is created with [fileMode]. It returns the open file, which the
// set owns (the caller may Stat it, never close it).
func (s *syncSet) writeFile(root *os.Root, p string, b []byte) (*os.File, error) {
	if dir := path.Dir(p); dir != "." {
		if err := root.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
	}
	f, err := root.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, fileMode(p))
	if err != nil {
		return nil, err
	}
	if _, err := f.Write(b); err != nil {
		_ = f.Close()
		return nil, err
	}
	s.files = append(s.files, f)
	return f, nil
}

// mkdirAll creates dir under root and adds it and its ancestors up to
// the root to the set: a directory created now needs its own entry in
// its parent made durable, not only its content.
func (s *syncSet) mkdirAll(root *os.Root, dir string) error {
	if dir == "." {
		return nil
	}
	if err := root.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	s.dirWithParents(root, dir)
	return nil
}

// dir adds directory d under root (its entries: creations, renames,
// links, removals) to the set.
func (s *syncSet) dir(root *os.Root, d string) {
	if s.dirs == nil {
		s.dirs = map[dirKey]bool{}
	}
	s.dirs[dirKey{root, d}] = true
}

// dirWithParents adds d and every ancestor of it up to the root.
func (s *syncSet) dirWithParents(root *os.Root, d string) {
	for {
		s.dir(root, d)
		if d == "." || d == "/" || d == "" {
			return
		}
		d = path.Dir(d)
	}
}

// flush makes every file's data and every directory durable, then closes
// the files; the set is empty afterwards. On Linux the writeback of all
// files is started before the first wait (sync_file_range), then each
// file gets fdatasync (its data and the size and blocks needed to read it
// back; the timestamps are not needed) and each directory fsync.
func (s *syncSet) flush() error {
	var errs []error
	for _, f := range s.files {
		startWriteback(f)
	}
	for _, f := range s.files {
		if err := datasync(f); err != nil {
			errs = append(errs, fmt.Errorf("sync %s: %w", f.Name(), err))
		}
		if err := f.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close %s: %w", f.Name(), err))
		}
	}
	for k := range s.dirs {
		if err := syncDir(k.root, k.dir); err != nil {
			errs = append(errs, fmt.Errorf("sync %s: %w", k.dir, err))
		}
	}
	s.files, s.dirs = nil, nil
	return errors.Join(errs...)
}

// discard closes the files without syncing them.
func (s *syncSet) discard() {
	for _, f := range s.files {
		_ = f.Close()
	}
	s.files, s.dirs = nil, nil
}
