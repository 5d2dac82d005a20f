package chart_test

import (
	"context"
	"regexp"
	"testing"

	v1alpha1 "github.com/haptic-io/haptic/api/v1alpha1"
	"github.com/haptic-io/haptic/internal/haproxytest"
	"github.com/haptic-io/haptic/libraries"
	"github.com/haptic-io/haptic/rendergate"
	"github.com/haptic-io/haptic/renderplan"
	"github.com/haptic-io/haptic/store"
	"github.com/haptic-io/haptic/templating"
)

// engineOf compiles a config after its libraries, as the controller does
// at config load.
func engineOf(t *testing.T, c *v1alpha1.HAProxyTemplateConfig) *templating.Engine {
	t.Helper()
	cfg, err := c.Spec.TemplatingConfig()
	if err != nil {
		t.Fatal(err)
	}
	libs, err := libraries.Load(c.Spec.LibraryNames()...)
	if err != nil {
		t.Fatal(err)
	}
	merged := templating.Merge(cfg)
	if len(libs) > 0 {
		merged = templating.Merge(libs[0], append(libs[1:], cfg)...)
	}
	e, err := templating.Compile(merged)
	if err != nil {
		t.Fatalf("compile the chart's config after its libraries: %v", err)
	}
	return e
}

// TestConfigPassesItsValidationTests runs the config-load gate the
// controller runs on the HAProxyTemplateConfig the chart installs: the
// libraries' and the config's validation tests, haproxy -c of HAProxy 3.4
// included.
func TestConfigPassesItsValidationTests(t *testing.T) {
	checker, err := rendergate.NewHAProxyChecker(rendergate.Config{Binary: haproxytest.Binary(t, "3.4")})
	if err != nil {
		t.Fatal(err)
	}
	for name, values := range valueSets(t) {
		t.Run(name, func(t *testing.T) {
			e := engineOf(t, decode(t, render(t, values)).config)
			report, err := templating.RunTests(context.Background(), e, templating.TestOptions{Checker: checker})
			if err != nil {
				t.Fatalf("validation tests: %v", err)
			}
			if report.Passed == 0 {
				t.Fatal("no validation test ran")
			}
			t.Logf("%d validation tests passed", report.Passed)
		})
	}
}

// TestConfigListensWhereThePodExpects renders the installed config on an
// empty cluster and reads the listeners, socket and tuning the chart set.
func TestConfigListensWhereThePodExpects(t *testing.T) {
	for name, want := range map[string][]string{
		"default": {
			`(?m)^    bind 0\.0\.0\.0:8080$`, `(?m)^    bind 0\.0\.0\.0:8443 ssl `, `(?m)^    bind 0\.0\.0\.0:8404$`,
			`(?m)^    stats socket unix@stats\.sock `, `(?m)^    hard-stop-after 30s$`, `!nbthread`,
		},
		"production": {
			`(?m)^    bind 0\.0\.0\.0:8080$`, `(?m)^    hard-stop-after 5m$`, `(?m)^    nbthread 2$`,
			`(?m)^    timeout client 30s$`,
		},
	} {
		t.Run(name, func(t *testing.T) {
			e := engineOf(t, decode(t, render(t, valueSets(t)[name])).config)
			st, err := store.NewMemory(e.Config().WatchedResources)
			if err != nil {
				t.Fatal(err)
			}
			out, problems, err := e.Render(context.Background(), st.Snapshot(), templating.RenderOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if len(problems) != 0 {
				t.Errorf("problems on an empty cluster: %v", problems)
			}
			cfg := configFile(t, out)
			for _, pat := range want {
				absent := pat[0] == '!'
				if absent {
					pat = pat[1:]
				}
				if found := regexp.MustCompile(pat).Match(cfg); found == absent {
					t.Errorf("haproxy.cfg: %q found = %v; want %v\n%s", pat, found, !absent, cfg)
				}
			}
		})
	}
}

func configFile(t *testing.T, out *renderplan.Output) []byte {
	t.Helper()
	for _, f := range out.Files {
		if f.Path == renderplan.ConfigPath {
			return f.Body
		}
	}
	t.Fatal("no haproxy.cfg rendered")
	return nil
}
