package templating_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/haptic-io/haptic/renderplan"
	"github.com/haptic-io/haptic/store"
	"github.com/haptic-io/haptic/templating"
)

// resourcesYAML watches the resources the author API reads.
const resourcesYAML = `
watchedResources:
  ingresses: {apiVersion: networking.k8s.io/v1, resource: ingresses, indexBy: ["metadata.namespace", "metadata.name"]}
  services:  {apiVersion: v1, resource: services, indexBy: ["metadata.namespace", "metadata.name"]}
  endpoints: {apiVersion: discovery.k8s.io/v1, resource: endpointslices, indexBy: ["metadata.namespace", "metadata.labels[\"kubernetes.io/service-name\"]"]}
  secrets:   {apiVersion: v1, resource: secrets, indexBy: ["metadata.namespace", "metadata.name"]}
`

// configWith returns a config with the standard watched resources and the
// given haproxyConfig template (indented into YAML).
func configWith(t *testing.T, haproxyCfg string, extraYAML string) *templating.Config {
	t.Helper()
	y := resourcesYAML + "haproxyConfig:\n  template: |\n" + indent(haproxyCfg, "    ") + extraYAML
	cfg, err := templating.ParseConfig([]byte(y))
	if err != nil {
		t.Fatalf("parse config: %v\n%s", err, y)
	}
	return cfg
}

func indent(s, pre string) string {
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = pre + l
	}
	return strings.Join(lines, "\n") + "\n"
}

// renderConfig renders cfg over objs.
func renderConfig(t *testing.T, cfg *templating.Config, objs ...map[string]any) (*renderplan.Output, []templating.Problem, error) {
	t.Helper()
	e, err := templating.Compile(cfg)
	if err != nil {
		t.Fatalf("compile: %v", err)
	}
	st, err := store.NewMemory(cfg.WatchedResources)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.AddObjects(objs...); err != nil {
		t.Fatal(err)
	}
	return e.Render(context.Background(), st.Snapshot(), templating.RenderOptions{})
}

// renderTemplate renders a haproxy.cfg template and fails the test on a
// render error.
func renderTemplate(t *testing.T, tmpl string, objs ...map[string]any) (*renderplan.Output, []templating.Problem) {
	t.Helper()
	out, problems, err := renderConfig(t, configWith(t, tmpl, ""), objs...)
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	return out, problems
}

// renderError renders a haproxy.cfg template that must fail and returns the
// error text.
func renderError(t *testing.T, tmpl string, objs ...map[string]any) string {
	t.Helper()
	_, _, err := renderConfig(t, configWith(t, tmpl, ""), objs...)
	if err == nil {
		t.Fatalf("render succeeded, want an error")
	}
	return err.Error()
}

func fileBody(t *testing.T, out *renderplan.Output, path string) string {
	t.Helper()
	for _, f := range out.Files {
		if f.Path == path {
			return string(f.Body)
		}
	}
	t.Fatalf("no file %s in output", path)
	return ""
}

func service(ns, name string, ports ...map[string]any) map[string]any {
	ps := make([]any, len(ports))
	for i, p := range ports {
		ps[i] = p
	}
	return map[string]any{
		"apiVersion": "v1", "kind": "Service",
		"metadata": map[string]any{"namespace": ns, "name": name},
		"spec":     map[string]any{"ports": ps},
	}
}

func svcPort(name string, port int64) map[string]any {
	return map[string]any{"name": name, "port": port}
}

type endpoint struct {
	addr  string
	pod   string
	ready any // nil, true or false
}

func slice(ns, name, svc string, ports map[string]int64, eps ...endpoint) map[string]any {
	var ps []any
	for n, p := range ports {
		ps = append(ps, map[string]any{"name": n, "port": p})
	}
	var es []any
	for _, e := range eps {
		m := map[string]any{"addresses": []any{e.addr}}
		if e.ready != nil {
			m["conditions"] = map[string]any{"ready": e.ready}
		}
		if e.pod != "" {
			m["targetRef"] = map[string]any{"kind": "Pod", "name": e.pod}
		}
		es = append(es, m)
	}
	return map[string]any{
		"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
		"metadata": map[string]any{"namespace": ns, "name": name,
			"labels": map[string]any{"kubernetes.io/service-name": svc}},
		"addressType": "IPv4",
		"ports":       ps,
		"endpoints":   es,
	}
}

func sprintf(format string, args ...any) string { return fmt.Sprintf(format, args...) }

func contains(s, sub string) bool { return strings.Contains(s, sub) }
