package libraries_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/haptic-io/haptic/internal/haproxytest"
	"github.com/haptic-io/haptic/rendergate"
	"github.com/haptic-io/haptic/renderplan"
	"github.com/haptic-io/haptic/templating"
)

// TestStockOutputPassesHAProxyCheck runs haproxy -c (cwd = the rendered
// tree) on every golden case and on the generated reference mix, on each
// supported HAProxy series.
func TestStockOutputPassesHAProxyCheck(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the real haproxy binary; skipped with -short")
	}
	cases, err := os.ReadDir("testdata/resources")
	if err != nil {
		t.Fatal(err)
	}
	haproxytest.ForEachSeries(t, func(t *testing.T, series string) {
		checker := newChecker(t, haproxytest.Binary(t, series))
		for _, c := range cases {
			t.Run(c.Name(), func(t *testing.T) {
				out, _ := renderResources(t, filepath.Join("testdata/resources", c.Name()), nil)
				if err := checker.Check(context.Background(), out); err != nil {
					t.Fatal(err)
				}
			})
		}
		t.Run("reference-mix-300", func(t *testing.T) {
			engine, snap := benchEngine(t, 300)
			out, problems, err := engine.Render(context.Background(), snap, templating.RenderOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if len(problems) != 0 {
				t.Fatalf("problems: %v", problems)
			}
			if err := checker.Check(context.Background(), out); err != nil {
				t.Fatal(err)
			}
		})
	})
}

// TestLibraryValidationTestsPass runs the validationTests of the base and
// ingress libraries, haproxy_valid included (HAProxy 3.4), as haptic
// validate does.
func TestLibraryValidationTestsPass(t *testing.T) {
	engine, err := templating.Compile(stockConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	opts := templating.TestOptions{}
	if testing.Short() {
		// Without HAProxy the haproxy_valid assertions cannot run: check
		// that every other assertion holds.
		opts.Checker = renderplan.CheckerFunc(func(context.Context, *renderplan.Output) error { return nil })
	} else {
		opts.Checker = newChecker(t, haproxytest.Binary(t, "3.4"))
	}
	report, err := templating.RunTests(context.Background(), engine, opts)
	if err != nil {
		t.Fatal(err)
	}
	if report.Passed < 9 {
		t.Errorf("%d tests passed, want at least 9 (did the libraries lose tests?)", report.Passed)
	}
}

// newChecker is rendergate's haproxy -c checker for binary.
func newChecker(t *testing.T, binary string) *rendergate.HAProxyChecker {
	t.Helper()
	c, err := rendergate.NewHAProxyChecker(rendergate.Config{Binary: binary})
	if err != nil {
		t.Fatal(err)
	}
	return c
}
