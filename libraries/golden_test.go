package libraries_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/haptic-io/haptic/renderplan"
	"github.com/haptic-io/haptic/store"
	"github.com/haptic-io/haptic/templating"
)

var update = flag.Bool("update", false, "rewrite testdata/golden from the current output")

// TestStockLibrariesMatchGoldenFiles renders every directory under
// testdata/resources with the base and ingress libraries and compares
// each rendered file, the problems and a plan summary with
// testdata/golden/<case>/. Run with -update to rewrite the golden files.
func TestStockLibrariesMatchGoldenFiles(t *testing.T) {
	cases, err := os.ReadDir("testdata/resources")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		t.Run(c.Name(), func(t *testing.T) {
			out, problems := renderResources(t, filepath.Join("testdata/resources", c.Name()), nil)
			got := goldenFiles(out, problems)
			dir := filepath.Join("testdata/golden", c.Name())
			if *update {
				if err := os.RemoveAll(dir); err != nil {
					t.Fatal(err)
				}
				for name, body := range got {
					p := filepath.Join(dir, filepath.FromSlash(name))
					if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				return
			}
			want := readTree(t, dir)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("rendered tree differs from %s (-want +got); rerun with -update if intended:\n%s", dir, diff)
			}
		})
	}
}

// renderResources renders the manifests under dir with the stock
// libraries and extra as extraContext overrides.
func renderResources(t *testing.T, dir string, extra map[string]any) (*renderplan.Output, []templating.Problem) {
	t.Helper()
	cfg := stockConfig(t)
	st, err := store.LoadDir(dir, cfg.WatchedResources)
	if err != nil {
		t.Fatal(err)
	}
	engine, err := templating.Compile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	out, problems, err := engine.Render(context.Background(), st.Snapshot(), templating.RenderOptions{ExtraContext: extra})
	if err != nil {
		t.Fatal(err)
	}
	return out, problems
}

// goldenFiles is what a golden directory holds: every rendered file,
// problems.txt and plan.txt (a summary of the plan's structure).
func goldenFiles(out *renderplan.Output, problems []templating.Problem) map[string]string {
	files := map[string]string{}
	for _, f := range out.Files {
		files[f.Path] = string(f.Body)
	}
	var b strings.Builder
	for _, p := range problems {
		fmt.Fprintln(&b, p)
	}
	files["problems.txt"] = b.String()
	files["plan.txt"] = planSummary(out.Plan)
	return files
}

// planSummary lists the plan's sections, profiles, backends, maps and
// files, one per line, without digests (they are covered by the files).
func planSummary(p *renderplan.Plan) string {
	var b strings.Builder
	for _, s := range p.Sections {
		fmt.Fprintf(&b, "section %s %s %d+%d\n", s.Kind, s.Name, s.Offset, s.Length)
	}
	for _, pr := range p.Profiles {
		fmt.Fprintf(&b, "profile %s mode=%s\n", pr.Name, pr.Mode)
	}
	for _, be := range p.Backends {
		fmt.Fprintf(&b, "backend %s guid=%s profile=%s shape=%s servers=%d\n", be.Name, be.GUID, be.Profile, be.Shape, len(be.Servers))
	}
	for _, m := range p.Maps {
		fmt.Fprintf(&b, "map %s ordered=%t entries=%d\n", m.Path, m.Ordered, len(m.Entries))
	}
	for _, f := range p.Files {
		fmt.Fprintf(&b, "file %s kind=%s size=%d reloadOnChange=%t\n", f.Path, f.Kind, f.Size, f.ReloadOnChange)
	}
	return b.String()
}

func readTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		files[filepath.ToSlash(rel)] = string(b)
		return nil
	})
	if err != nil {
		t.Fatalf("read golden files (run with -update to create them): %v", err)
	}
	return files
}
