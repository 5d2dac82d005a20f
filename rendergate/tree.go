package rendergate

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"

	"github.com/haptic-io/haptic/renderplan"
)

// treeProblem says why out cannot be laid out as a tree, or "" if it can:
// every path must be local and clean, appear once, not be the parent
// directory of another path, and haproxy.cfg must be among them.
func treeProblem(out *renderplan.Output) string {
	files := make(map[string]bool, len(out.Files))
	for _, f := range out.Files {
		p := f.Path
		switch {
		case !filepath.IsLocal(p) || path.Clean(p) != p:
			return fmt.Sprintf("file %q: path is not a clean path inside the tree", p)
		case files[p]:
			return fmt.Sprintf("file %q: path appears twice", p)
		}
		files[p] = true
	}
	for p := range files {
		for d := path.Dir(p); d != "."; d = path.Dir(d) {
			if files[d] {
				return fmt.Sprintf("file %q: its directory %q is also a file", p, d)
			}
		}
	}
	if !files[renderplan.ConfigPath] {
		return fmt.Sprintf("output has no %s", renderplan.ConfigPath)
	}
	return ""
}

// layOut writes out's files under dir (directories 0700, files 0600),
// never outside it (os.Root), and gives dir and everything in it to runAs
// when it is set. out must have passed treeProblem.
func layOut(dir string, out *renderplan.Output, runAs *User) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	owned := []string{"."}
	dirs := map[string]bool{".": true}
	for _, f := range out.Files {
		var parents []string
		for d := path.Dir(f.Path); !dirs[d]; d = path.Dir(d) {
			dirs[d] = true
			parents = append(parents, d)
		}
		if len(parents) > 0 {
			if err := root.MkdirAll(path.Dir(f.Path), 0o700); err != nil {
				return err
			}
		}
		if err := root.WriteFile(f.Path, f.Body, 0o600); err != nil {
			return err
		}
		owned = append(owned, parents...)
		owned = append(owned, f.Path)
	}
	if runAs == nil {
		return nil
	}
	sort.Strings(owned)
	for _, name := range owned {
		if err := root.Chown(name, int(runAs.UID), int(runAs.GID)); err != nil {
			return err
		}
	}
	return nil
}
