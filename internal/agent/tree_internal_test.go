package agent

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/haptic-io/haptic/renderplan"
)

func TestCheckPathAcceptsOnlyTheManagedTree(t *testing.T) {
	for p, ok := range map[string]bool{
		"haproxy.cfg":                       true,
		"maps/hosts.map":                    true,
		"certs/a/b.pem":                     true,
		"general/errors/503.http":           true,
		"":                                  false,
		"/etc/passwd":                       false,
		"../x":                              false,
		"maps/../haproxy.cfg":               false,
		"maps":                              false,
		"maps/":                             false,
		"maps//x":                           false,
		"maps/./x":                          false,
		"maps/.hidden":                      false,
		".haptic/state.json":                false,
		"other/x":                           false,
		"haproxy.cfg/x":                     false,
		"maps/a b":                          false,
		"maps/a\nb":                         false,
		"maps/a\\b":                         false,
		"maps/\xff":                         false,
		"maps/" + strings.Repeat("a", 1100): false,
	} {
		if got := checkPath(p) == nil; got != ok {
			t.Errorf("checkPath(%q) accepted=%v, want %v", p, got, ok)
		}
	}
}

func TestSwapOrderPutsTheConfigLast(t *testing.T) {
	got := swapOrder([]journalEntry{{Path: "haproxy.cfg"}, {Path: "maps/b"}, {Path: "certs/a"}})
	want := []journalEntry{{Path: "certs/a"}, {Path: "maps/b"}, {Path: "haproxy.cfg"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("swap order (-want +got):\n%s", diff)
	}
}

func TestConfigDefaultsAndCeilings(t *testing.T) {
	c, err := Config{BaseDir: "/b", MasterSocket: "/m", StatsSocket: "/s"}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	if c.MinReloadInterval != DefaultMinReloadInterval || c.ReloadTimeout != DefaultReloadTimeout ||
		c.DriftInterval != DefaultDriftInterval || c.StateDir != "/b/.haptic" {
		t.Errorf("defaults: %+v", c)
	}
	for name, bad := range map[string]Config{
		"BaseDir":           {MasterSocket: "/m", StatsSocket: "/s"},
		"MinReloadInterval": {BaseDir: "/b", MasterSocket: "/m", StatsSocket: "/s", MinReloadInterval: 61e9},
		"ReloadTimeout":     {BaseDir: "/b", MasterSocket: "/m", StatsSocket: "/s", ReloadTimeout: 61e9},
		"MasterSocket":      {BaseDir: "/b", StatsSocket: "/s"},
	} {
		if _, err := bad.withDefaults(); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: error %v, want one naming the field", name, err)
		}
	}
}

// FuzzCheckPath: an accepted path stays inside the base directory, under
// haproxy.cfg or a managed directory, with no hidden element.
func FuzzCheckPath(f *testing.F) {
	for _, s := range []string{"haproxy.cfg", "maps/hosts.map", "../x", "maps/../../x", "maps/.x", "certs/a/b.pem", "general/x y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		if checkPath(p) != nil {
			return
		}
		joined := filepath.Join("/base", p)
		if !strings.HasPrefix(joined, "/base/") {
			t.Fatalf("%q escapes the base: %s", p, joined)
		}
		first, _, _ := strings.Cut(p, "/")
		if p != "haproxy.cfg" && !isManagedDir(first) {
			t.Fatalf("%q is outside the managed tree", p)
		}
		for _, e := range strings.Split(p, "/") {
			if strings.HasPrefix(e, ".") || e == "" {
				t.Fatalf("%q has a hidden or empty element", p)
			}
		}
	})
}

// TestStagedStampsLetTheNextHashSkipTheSwappedFiles checks what the
// apply relies on when it primes the tree cache with the stamps stage
// returns: the swap's renames keep each staged file's size, modification
// time and inode, so the cached digests are used and agree with hashing
// the tree afresh.
func TestStagedStampsLetTheNextHashSkipTheSwappedFiles(t *testing.T) {
	dir := t.TempDir()
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	if err := os.WriteFile(filepath.Join(dir, "haproxy.cfg"), []byte("global\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bodies := map[string][]byte{"haproxy.cfg": []byte("global\n    maxconn 10\n"), "maps/hosts.map": []byte("a.example.com be_a\n")}
	files := manifest{}
	for p, b := range bodies {
		files[p] = renderplan.DigestOf(b)
	}
	entries := swapOrder([]journalEntry{{Path: "haproxy.cfg", Old: true, New: true}, {Path: "maps/hosts.map", New: true}})
	tx := &txn{id: "t1", base: root}
	var staged, dirs syncSet
	stamps, err := tx.stage(&staged, bodies, entries, files)
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.backup(&staged, entries); err != nil {
		t.Fatal(err)
	}
	if err := staged.flush(); err != nil {
		t.Fatal(err)
	}
	if err := tx.swap(&dirs, entries, func(string) {}); err != nil {
		t.Fatal(err)
	}
	if len(stamps) != len(bodies) {
		t.Fatalf("stage returned %d stamps, want %d", len(stamps), len(bodies))
	}
	for p, st := range stamps {
		fi, err := root.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		got := stamp{size: fi.Size(), mtime: fi.ModTime().UnixNano(), ino: fi.Sys().(*syscall.Stat_t).Ino, sum: files[p]}
		if got != st {
			t.Errorf("%s: stamp after the swap %+v, staged %+v", p, got, st)
		}
	}
	cache := map[string]stamp{}
	for p, st := range stamps {
		cache[p] = st
	}
	cached, err := hashTreeCached(root, cache)
	if err != nil {
		t.Fatal(err)
	}
	fresh, err := hashTree(root)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(fresh, cached); diff != "" {
		t.Errorf("cached hash (-fresh +cached):\n%s", diff)
	}
	if diff := cmp.Diff(files, fresh); diff != "" {
		t.Errorf("tree after the swap (-want +got):\n%s", diff)
	}
}
