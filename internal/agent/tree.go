package agent

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/haptic-io/haptic/renderplan"
)

// managedDirs are the directories of the tree besides haproxy.cfg. The
// agent writes, hashes and deletes files only here.
var managedDirs = []string{"maps", "certs", "general"}

// ErrUnsafePath means a file path of an apply is not a clean relative path
// inside the managed tree, or resolves outside it (a symlink escape).
var ErrUnsafePath = errors.New("agent: unsafe file path")

// checkPath reports whether p is a file path the agent may own:
// "haproxy.cfg" or a clean relative path under maps/, certs/ or general/
// without hidden elements, whitespace or control characters.
func checkPath(p string) error {
	bad := func(why string) error { return fmt.Errorf("%w: %q %s", ErrUnsafePath, p, why) }
	switch {
	case p == "":
		return bad("is empty")
	case len(p) > 1024:
		return bad("is longer than 1024 bytes")
	case !utf8.ValidString(p):
		return bad("is not valid UTF-8")
	case path.IsAbs(p):
		return bad("is absolute")
	case path.Clean(p) != p:
		return bad("is not clean")
	}
	for i := 0; i < len(p); i++ {
		if c := p[i]; c <= ' ' || c == 0x7f || c == '\\' {
			return bad("contains whitespace, a backslash or a control character")
		}
	}
	if p == renderplan.ConfigPath {
		return nil
	}
	elems := strings.Split(p, "/")
	if len(elems) < 2 || !isManagedDir(elems[0]) {
		return bad("is not haproxy.cfg nor under maps/, certs/ or general/")
	}
	for _, e := range elems {
		if e == ".." || e == "." || strings.HasPrefix(e, ".") {
			return bad("has a hidden, '.' or '..' element")
		}
	}
	return nil
}

func isManagedDir(d string) bool {
	for _, m := range managedDirs {
		if d == m {
			return true
		}
	}
	return false
}

// manifest maps a file path to the digest of its content.
type manifest map[string]renderplan.Digest

// equal reports whether m and o list the same files with the same digests.
func (m manifest) equal(o manifest) bool {
	if len(m) != len(o) {
		return false
	}
	for p, d := range m {
		if o[p] != d {
			return false
		}
	}
	return true
}

// diff lists, sorted, the paths whose digest differs between m and o,
// including paths only one of them has.
func (m manifest) diff(o manifest) []string {
	var out []string
	for p, d := range m {
		if o[p] != d {
			out = append(out, p)
		}
	}
	for p := range o {
		if _, ok := m[p]; !ok {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

// hashTree reads every regular file of the managed tree under root and
// returns its manifest. Anything else than a regular file or a directory
// (a symlink, a socket) is listed with the digest "!<type>" so that it
// never matches an applied manifest.
func hashTree(root *os.Root) (manifest, error) { return hashTreeCached(root, nil) }

// stamp identifies one version of a file without reading it.
type stamp struct {
	size  int64
	mtime int64
	ino   uint64
	sum   renderplan.Digest
}

// hashTreeCached is [hashTree] reusing the digest of every file whose
// size, modification time and inode match cache (nil: no cache); it
// refreshes cache. The apply path uses it; the drift check does not.
func hashTreeCached(root *os.Root, cache map[string]stamp) (manifest, error) {
	m := manifest{}
	seen := map[string]bool{}
	if err := hashOne(root, renderplan.ConfigPath, m, cache, seen); err != nil {
		return nil, err
	}
	for _, d := range managedDirs {
		err := fs.WalkDir(root.FS(), d, func(p string, e fs.DirEntry, err error) error {
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) && p == d {
					return fs.SkipDir
				}
				return err
			}
			if e.IsDir() {
				return nil
			}
			return hashOne(root, p, m, cache, seen)
		})
		if err != nil {
			return nil, fmt.Errorf("hash %s: %w", d, err)
		}
	}
	for p := range cache {
		if !seen[p] {
			delete(cache, p)
		}
	}
	return m, nil
}

// stampOf returns the stamp of the open file f with digest sum; false
// when f cannot be stat'ed or has no inode number.
func stampOf(f *os.File, sum renderplan.Digest) (stamp, bool) {
	fi, err := f.Stat()
	if err != nil {
		return stamp{}, false
	}
	st := stamp{size: fi.Size(), mtime: fi.ModTime().UnixNano(), sum: sum}
	if sys, ok := fi.Sys().(*syscall.Stat_t); ok {
		st.ino = sys.Ino
	}
	return st, st.ino != 0
}

func hashOne(root *os.Root, p string, m manifest, cache map[string]stamp, seen map[string]bool) error {
	fi, err := root.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("hash %s: %w", p, err)
	}
	if !fi.Mode().IsRegular() {
		m[p] = renderplan.Digest("!" + fi.Mode().Type().String())
		return nil
	}
	st := stamp{size: fi.Size(), mtime: fi.ModTime().UnixNano()}
	if sys, ok := fi.Sys().(*syscall.Stat_t); ok {
		st.ino = sys.Ino
	}
	seen[p] = true
	if c, ok := cache[p]; ok && c.size == st.size && c.mtime == st.mtime && c.ino == st.ino && st.ino != 0 {
		m[p] = c.sum
		return nil
	}
	b, err := root.ReadFile(p)
	if err != nil {
		return fmt.Errorf("hash %s: %w", p, err)
	}
	st.sum = renderplan.DigestOf(b)
	m[p] = st.sum
	if cache != nil {
		cache[p] = st
	}
	return nil
}

// fileMode is the mode a tree or state file is created with: 0644, 0600
// for certificates, which carry private keys.
func fileMode(p string) os.FileMode {
	if strings.HasPrefix(p, "certs/") || strings.Contains(p, "/certs/") {
		return 0o600
	}
	return 0o644
}

// syncDir fsyncs directory p under root so that renames and creations in
// it are durable.
func syncDir(root *os.Root, p string) error {
	f, err := root.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}

// checkTarget refuses an existing tree path that is not a regular file:
// a symlink or a socket is never overwritten or backed up.
func checkTarget(root *os.Root, p string) (exists bool, err error) {
	fi, err := root.Lstat(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("%w: %s: %w", ErrUnsafePath, p, err)
	case !fi.Mode().IsRegular():
		return false, fmt.Errorf("%w: %s is a %s, not a regular file", ErrUnsafePath, p, fi.Mode().Type())
	}
	return true, nil
}

func parentOf(p string) string { return path.Dir(p) }

func isNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }
