package v1alpha1_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/haptic-io/haptic/libraries"
	"github.com/haptic-io/haptic/templating"
)

// repoRoot is the module root, seen from this package's directory (where
// go test runs).
var repoRoot = filepath.Join("..", "..")

// readRepoFile reads a file by its path from the module root.
func readRepoFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, filepath.FromSlash(path)))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// mergeLibraries merges the named stock libraries and then cfg, as the
// controller does.
func mergeLibraries(t *testing.T, names []string, cfg *templating.Config) *templating.Config {
	t.Helper()
	libs, err := libraries.Load(names...)
	if err != nil {
		t.Fatal(err)
	}
	if len(libs) == 0 {
		return templating.Merge(cfg)
	}
	return templating.Merge(libs[0], append(libs[1:], cfg)...)
}
