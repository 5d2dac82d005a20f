package chart_test

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestCRDsAreTheGeneratedOnes: charts/haptic/crds holds copies of
// config/crd/bases, the one source (`make generate` writes both).
func TestCRDsAreTheGeneratedOnes(t *testing.T) {
	src := yamlFiles(t, filepath.Join(repoRoot, "config", "crd", "bases"))
	dst := yamlFiles(t, filepath.Join(chartDir, "crds"))
	if len(src) == 0 {
		t.Fatal("config/crd/bases holds no CRD")
	}
	for _, name := range sortedKeys(src) {
		b, ok := dst[name]
		switch {
		case !ok:
			t.Errorf("charts/haptic/crds/%s is missing: run make generate", name)
		case !bytes.Equal(b, src[name]):
			t.Errorf("charts/haptic/crds/%s differs from config/crd/bases/%s: run make generate", name, name)
		}
	}
	for _, name := range sortedKeys(dst) {
		if _, ok := src[name]; !ok {
			t.Errorf("charts/haptic/crds/%s is not in config/crd/bases: run make generate", name)
		}
	}
	// Helm installs crds/ as they are; they must also load as chart files.
	c := loadChart(t)
	if n := len(c.CRDObjects()); n != len(src) {
		t.Errorf("the chart carries %d CRDs; want %d", n, len(src))
	}
}

func yamlFiles(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		files[filepath.Base(p)] = b
	}
	return files
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
