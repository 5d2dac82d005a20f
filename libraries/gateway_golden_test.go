package libraries_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/haptic-io/haptic/gatewayapi"
	"github.com/haptic-io/haptic/internal/haproxytest"
	"github.com/haptic-io/haptic/renderplan"
	"github.com/haptic-io/haptic/store"
	"github.com/haptic-io/haptic/templating"
)

// TestGatewayLibraryMatchesGoldenFiles renders every directory under
// testdata/gateway/resources with the base and gateway libraries, for
// the first Gateway the model serves (none for a directory without one),
// and compares the files, problems and plan summary with
// testdata/gateway/golden/<case>/. Run with -update to rewrite them.
// Every case also passes haproxy -c on every series.
func TestGatewayLibraryMatchesGoldenFiles(t *testing.T) {
	cases, err := os.ReadDir("testdata/gateway/resources")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		t.Run(c.Name(), func(t *testing.T) {
			out, problems := renderGateway(t, filepath.Join("testdata/gateway/resources", c.Name()))
			got := goldenFiles(out, problems)
			dir := filepath.Join("testdata/gateway/golden", c.Name())
			if *update {
				writeTree(t, dir, got)
				return
			}
			if diff := cmp.Diff(readTree(t, dir), got); diff != "" {
				t.Errorf("rendered tree differs from %s (-want +got); rerun with -update if intended:\n%s", dir, diff)
			}
			if testing.Short() {
				return
			}
			haproxytest.ForEachSeries(t, func(t *testing.T, series string) {
				if err := newChecker(t, haproxytest.Binary(t, series)).Check(context.Background(), out); err != nil {
					t.Fatal(err)
				}
			})
		})
	}
}

func renderGateway(t *testing.T, dir string) (*renderplan.Output, []templating.Problem) {
	t.Helper()
	cfg := gatewayConfig(t)
	st, err := store.LoadDir(dir, cfg.WatchedResources)
	if err != nil {
		t.Fatal(err)
	}
	extra := map[string]any{"statsSocket": "stats.sock"}
	model := gatewayapi.Build(st.Snapshot(), gatewayapi.Options{})
	if gws := model.Gateways(); len(gws) > 0 {
		extra["gateway"] = model.RenderContext(gws[0])
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

func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestGatewayLibraryValidationTestsPass runs the validationTests of the
// base and gateway libraries, haproxy_valid included (HAProxy 3.4).
func TestGatewayLibraryValidationTestsPass(t *testing.T) {
	engine, err := templating.Compile(gatewayConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	opts := templating.TestOptions{}
	if testing.Short() {
		opts.Checker = renderplan.CheckerFunc(func(context.Context, *renderplan.Output) error { return nil })
	} else {
		opts.Checker = newChecker(t, haproxytest.Binary(t, "3.4"))
	}
	report, err := templating.RunTests(context.Background(), engine, opts)
	if err != nil {
		t.Fatal(err)
	}
	if report.Failed > 0 || report.Passed < 2 {
		t.Errorf("validation tests: %+v", report)
	}
}
