package chart_test

import (
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/action"
)

// valueSets are the values every render test runs with: the chart's
// defaults and a production values file.
func valueSets(t *testing.T) map[string]map[string]any {
	t.Helper()
	return map[string]map[string]any{
		"default":    nil,
		"production": readValues(t, "production-values.yaml"),
	}
}

// TestRenderMatchesGolden renders the chart as `helm template haptic
// charts/haptic -n haptic [-f testdata/production-values.yaml]` does and
// compares the manifests and NOTES.txt with testdata/golden.
func TestRenderMatchesGolden(t *testing.T) {
	for name, values := range valueSets(t) {
		t.Run(name, func(t *testing.T) {
			r := render(t, values)
			golden(t, name+".yaml", r.Manifest)
			golden(t, name+".notes.txt", r.Notes)
		})
	}
}

// TestLintPasses runs `helm lint --strict` through the SDK, with each
// value set.
func TestLintPasses(t *testing.T) {
	for name, values := range valueSets(t) {
		t.Run(name, func(t *testing.T) {
			lint := action.NewLint()
			lint.Strict = true
			lint.Namespace = namespace
			lint.KubeVersion = kubeVersion
			res := lint.Run([]string{chartDir}, values)
			for _, m := range res.Messages {
				t.Logf("lint: %s", m)
			}
			for _, err := range res.Errors {
				t.Errorf("lint: %v", err)
			}
		})
	}
}

func TestNotesSayWhatToTry(t *testing.T) {
	for typ, want := range map[string]string{
		"LoadBalancer": "status.loadBalancer.ingress[0]",
		"NodePort":     "nodePort",
		"ClusterIP":    "port-forward svc/haptic-haproxy",
	} {
		t.Run(typ, func(t *testing.T) {
			notes := render(t, map[string]any{"service": map[string]any{"type": typ}}).Notes
			for _, s := range []string{"kubectl -n haptic get htc,hcfg", "curl -H 'Host: echo.example.com'", "--class=haptic", want} {
				if !strings.Contains(notes, s) {
					t.Errorf("NOTES.txt lacks %q:\n%s", s, notes)
				}
			}
		})
	}
}
