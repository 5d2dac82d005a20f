package chart_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"sigs.k8s.io/yaml"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// Paths from this package's directory (where go test runs).
var (
	repoRoot = filepath.Join("..", "..")
	chartDir = filepath.Join(repoRoot, "charts", "haptic")
)

// Release name and namespace of every render, as in the README's
// `helm install haptic charts/haptic -n haptic`.
const (
	releaseName = "haptic"
	namespace   = "haptic"
)

// kubeVersion is the cluster version renders and lint assume.
var kubeVersion = &chartutil.KubeVersion{Version: "v1.33.0", Major: "1", Minor: "33"}

// loadChart loads charts/haptic from the tree.
func loadChart(t *testing.T) *chart.Chart {
	t.Helper()
	c, err := loader.Load(chartDir)
	if err != nil {
		t.Fatalf("load %s: %v", chartDir, err)
	}
	return c
}

// readValues reads a values file from testdata.
func readValues(t *testing.T, name string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := yaml.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return v
}

// rendered is one release's output as `helm template` prints it.
type rendered struct {
	Manifest string     // every object, "---"-separated, with "# Source:" lines
	Notes    string     // NOTES.txt
	Docs     []manifest // Manifest split by document
}

// manifest is one rendered YAML document and the template it came from.
type manifest struct {
	Source string // e.g. haptic/templates/rbac.yaml
	Body   []byte
}

// render installs the chart client-only (the `helm template` path, which
// validates values against values.schema.json) and returns its output.
func render(t *testing.T, values map[string]any) rendered {
	t.Helper()
	r, err := tryRender(loadChart(t), values)
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	return r
}

func tryRender(c *chart.Chart, values map[string]any) (rendered, error) {
	install := action.NewInstall(&action.Configuration{Log: func(string, ...any) {}})
	install.ClientOnly = true
	install.DryRun = true
	install.ReleaseName = releaseName
	install.Namespace = namespace
	install.KubeVersion = kubeVersion
	install.Replace = true
	rel, err := install.Run(c, values)
	if err != nil {
		return rendered{}, err
	}
	r := rendered{Manifest: rel.Manifest, Notes: rel.Info.Notes}
	for _, doc := range strings.Split(rel.Manifest, "\n---\n") {
		doc = strings.TrimPrefix(strings.TrimSpace(doc), "---")
		src, body, _ := strings.Cut(strings.TrimSpace(doc), "\n")
		if !strings.HasPrefix(src, "# Source: ") || strings.TrimSpace(body) == "" {
			continue
		}
		r.Docs = append(r.Docs, manifest{Source: strings.TrimPrefix(src, "# Source: "), Body: []byte(body)})
	}
	return r, nil
}

// generatedToken matches the random agent token of the chart's Secret.
var generatedToken = regexp.MustCompile(`(?m)^  token: [A-Za-z0-9+/]{64}$`)

// golden compares got with testdata/golden/name, or rewrites it with
// -update. The generated agent token is replaced by a placeholder first.
func golden(t *testing.T, name, got string) {
	t.Helper()
	got = generatedToken.ReplaceAllString(got, "  token: <generated: 48 random characters, base64>")
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to write it)", err)
	}
	if !bytes.Equal(want, []byte(got)) {
		t.Errorf("%s is stale (go test -update rewrites it) (-want +got):\n%s", path, cmp.Diff(string(want), got))
	}
}

// kindOf reads apiVersion and kind of a rendered document.
func kindOf(t *testing.T, m manifest) (apiVersion, kind string) {
	t.Helper()
	var tm struct{ APIVersion, Kind string }
	if err := yaml.Unmarshal(m.Body, &tm); err != nil {
		t.Fatalf("%s: %v", m.Source, err)
	}
	return tm.APIVersion, tm.Kind
}
