package agent

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSyncSetWritesFilesAndListsNewDirectoriesWithTheirParents(t *testing.T) {
	dir := t.TempDir()
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	var s syncSet
	if err := s.mkdirAll(root, "a/b"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.writeFile(root, "a/b/f", []byte("one")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.writeFile(root, "certs/k.pem", []byte("key")); err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for k := range s.dirs {
		got[k.dir] = true
	}
	if diff := cmp.Diff(map[string]bool{"a/b": true, "a": true, ".": true}, got); diff != "" {
		t.Errorf("directories to sync (-want +got):\n%s", diff)
	}
	if err := s.flush(); err != nil {
		t.Fatal(err)
	}
	if len(s.files) != 0 || len(s.dirs) != 0 {
		t.Errorf("flush left %d files and %d directories in the set", len(s.files), len(s.dirs))
	}
	if b, err := os.ReadFile(filepath.Join(dir, "a/b/f")); err != nil || string(b) != "one" {
		t.Errorf("a/b/f = %q, %v", b, err)
	}
	if fi, err := os.Stat(filepath.Join(dir, "certs/k.pem")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("certs/k.pem: %v, %v; want mode 0600", fi, err)
	}
}

func TestSyncSetFlushReportsADirectoryThatIsGone(t *testing.T) {
	dir := t.TempDir()
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	var s syncSet
	if err := s.mkdirAll(root, "gone"); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "gone")); err != nil {
		t.Fatal(err)
	}
	if err := s.flush(); err == nil {
		t.Error("flush synced a directory that does not exist")
	}
}
