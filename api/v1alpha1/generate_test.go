package v1alpha1_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"testing"
	"time"
)

// generated lists the committed outputs of hack/generate-crds.sh, by
// directory from the module root: every file in them is generated.
var generated = map[string]string{
	"api/v1alpha1":     "zz_generated.deepcopy.go",
	"config/crd/bases": "*.yaml",
}

// TestGeneratedFilesAreUpToDate runs the generator into a scratch
// directory and compares its output with the committed files. The first
// run builds controller-gen into .cache/bin (1.5-3 minutes on two cores;
// `make test` builds it before the tests); later runs reuse it while
// tools/codegen is unchanged and take a few seconds.
func TestGeneratedFilesAreUpToDate(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skipping the generator run (builds controller-gen on first use)")
	}
	out := t.TempDir()
	start := time.Now()
	cmd := exec.Command("bash", filepath.Join(repoRoot, "hack", "generate-crds.sh"), out)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("hack/generate-crds.sh: %v\n%s", err, stderr.String())
	}
	t.Logf("generator took %s:\n%s", time.Since(start).Round(time.Millisecond), stderr.String())

	for dir, pattern := range generated {
		committed := glob(t, filepath.Join(repoRoot, filepath.FromSlash(dir)), pattern)
		fresh := glob(t, filepath.Join(out, filepath.FromSlash(dir)), pattern)
		for name := range fresh {
			if _, ok := committed[name]; !ok {
				t.Errorf("%s/%s is generated but not committed: run make generate", dir, name)
			}
		}
		for name, b := range committed {
			f, ok := fresh[name]
			switch {
			case !ok:
				t.Errorf("%s/%s is committed but no longer generated: run make generate", dir, name)
			case !bytes.Equal(b, f):
				t.Errorf("%s/%s is stale: run make generate", dir, name)
			}
		}
	}
}

// glob reads the files of dir matching pattern, by base name.
func glob(t *testing.T, dir, pattern string) map[string][]byte {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, pattern))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(paths)
	files := make(map[string][]byte, len(paths))
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		files[filepath.Base(p)] = b
	}
	return files
}
