package deployplan_test

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/tools/txtar"

	"github.com/haptic-io/haptic/deployplan"
)

var update = flag.Bool("update", false, "rewrite the want.decision section of testdata/diff/*.txtar")

// TestDiffScenarios walks testdata/diff: one txtar per story, with the
// sections base.plan (absent or "unknown" for an unknown baseline),
// next.plan, caps and want.decision (Decision.String()). Run with -update
// to rewrite want.decision after a deliberate change, then review the diff.
func TestDiffScenarios(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("testdata", "diff", "*.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) == 0 {
		t.Fatal("no scenarios in testdata/diff")
	}
	for _, path := range paths {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".txtar"), func(t *testing.T) {
			ar, err := txtar.ParseFile(path)
			if err != nil {
				t.Fatal(err)
			}
			sections := map[string]string{}
			for _, f := range ar.Files {
				sections[f.Name] = string(f.Data)
			}
			for _, name := range []string{"next.plan", "caps"} {
				if _, ok := sections[name]; !ok {
					t.Fatalf("section %s missing", name)
				}
			}
			base := parseCaps(t, sections["caps"])
			if src, ok := sections["base.plan"]; ok && strings.TrimSpace(src) != "unknown" {
				base.Plan = parsePlan(t, src).Plan
			}
			next := parsePlan(t, sections["next.plan"]).Plan

			got := deployplan.Diff(next, base).String()
			if again := deployplan.Diff(next, base).String(); again != got {
				t.Fatalf("Diff is not deterministic:\n%s\nthen\n%s", got, again)
			}
			if *update {
				found := false
				for i := range ar.Files {
					if ar.Files[i].Name == "want.decision" {
						ar.Files[i].Data = []byte(got)
						found = true
					}
				}
				if !found {
					ar.Files = append(ar.Files, txtar.File{Name: "want.decision", Data: []byte(got)})
				}
				if err := os.WriteFile(path, txtar.Format(ar), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if diff := cmp.Diff(sections["want.decision"], got); diff != "" {
				t.Errorf("decision (-want +got):\n%s", diff)
			}
		})
	}
}
