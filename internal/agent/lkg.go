package agent

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/haptic-io/haptic/renderplan"
)

// The last-known-good set lives in StateDir as lkg-<id>/<path>: hard
// links to the committed tree's files. The agent never edits a tree file
// in place (every write is a rename of a new file), so a link keeps the
// committed bytes after the tree moves on. state.json names the current
// set and its manifest, so the set becomes current with the same atomic
// write that commits the apply; older sets are pruned after it. Loading a
// set checks every digest, so a file edited in place behind the agent's
// back is refused, never restored.

// linkLKG hard-links every file of files from the tree into a new set
// lkg-<id> and, on success, adds its directories to sync (the links must
// be durable before the state that names the set); it returns the set's
// name.
func (a *Agent) linkLKG(id string, files manifest, sync *syncSet) (string, error) {
	dir := "lkg-" + id
	if err := a.state.RemoveAll(dir); err != nil {
		return "", err
	}
	dirs := map[string]bool{}
	for p := range files {
		if err := checkPath(p); err != nil {
			return "", err
		}
		fi, err := a.base.Lstat(p)
		if err != nil {
			return "", fmt.Errorf("lkg %s: %w", p, err)
		}
		if !fi.Mode().IsRegular() {
			return "", fmt.Errorf("lkg %s: not a regular file", p)
		}
		dst := path.Join(dir, p)
		if err := a.state.MkdirAll(path.Dir(dst), 0o700); err != nil {
			return "", fmt.Errorf("lkg %s: %w", p, err)
		}
		if err := os.Link(filepath.Join(a.cfg.BaseDir, filepath.FromSlash(p)), filepath.Join(a.cfg.StateDir, filepath.FromSlash(dst))); err != nil {
			return "", fmt.Errorf("lkg %s: %w", p, err)
		}
		dirs[path.Dir(dst)] = true
	}
	for d := range dirs {
		sync.dirWithParents(a.state, d)
	}
	return dir, nil
}

// pruneLKG removes every set but keep.
func (a *Agent) pruneLKG(keep string) {
	entries, err := fs.ReadDir(a.state.FS(), ".")
	if err != nil {
		return
	}
	for _, e := range entries {
		if n := e.Name(); strings.HasPrefix(n, "lkg-") && n != keep {
			_ = a.state.RemoveAll(n)
		}
	}
}

// loadLKG reads every file of the current set and checks its digest.
func (a *Agent) loadLKG() (string, manifest, map[string][]byte, error) {
	a.mu.Lock()
	dir, planID, files := a.durable.LKGDir, a.durable.LKGPlanID, a.durable.LKGFiles
	a.mu.Unlock()
	if dir == "" {
		return "", nil, nil, errors.New("no last-known-good set")
	}
	bodies := make(map[string][]byte, len(files))
	for p, d := range files {
		b, err := a.state.ReadFile(path.Join(dir, p))
		if err != nil {
			return "", nil, nil, fmt.Errorf("last-known-good %s: %w", p, err)
		}
		if got := renderplan.DigestOf(b); got != d {
			return "", nil, nil, fmt.Errorf("last-known-good %s: digest %s, want %s (edited in place?)", p, got, d)
		}
		bodies[p] = b
	}
	return planID, files, bodies, nil
}
