package templating_test

import (
	"context"
	"strings"
	"testing"

	"github.com/haptic-io/haptic/store"
	"github.com/haptic-io/haptic/templating"
)

// listOnly is a Store without ListBy: templates still get sorted lists.
type listOnly struct{ templating.Store }

func TestTemplatesListByAnIndexExpression(t *testing.T) {
	cfg := configWith(t, `{{ range .resources.ingresses.ListBy "metadata.creationTimestamp" }}{{ .metadata.name }} {{ end }}
{{- range .resources.ingresses.ListBy "metadata.creationTimestamp" }}{{ .metadata.name }} {{ end }}`, "")
	ing := func(name, ts string) map[string]any {
		o := map[string]any{"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": map[string]any{"namespace": "ns", "name": name, "creationTimestamp": ts}}
		return o
	}
	st, err := store.NewMemory(cfg.WatchedResources)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.AddObjects(ing("c", "2026-01-01T00:00:00Z"), ing("a", "2026-03-01T00:00:00Z"), ing("b", "2026-01-01T00:00:00Z")); err != nil {
		t.Fatal(err)
	}
	e, err := templating.Compile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for name, s := range map[string]templating.Store{"snapshot": st.Snapshot(), "plain store": listOnly{st.Snapshot()}} {
		out, _, err := e.Render(context.Background(), s, templating.RenderOptions{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got, want := string(out.Files[0].Body), "b c a b c a \n"; got != want {
			t.Errorf("%s: haproxy.cfg = %q, want %q", name, got, want)
		}
	}
}

func TestListByWithABadExpressionIsARenderError(t *testing.T) {
	msg := renderError(t, `{{ .resources.ingresses.ListBy "metadata..name" }}`)
	if !strings.Contains(msg, "ListBy") || !strings.Contains(msg, "expected a field name") {
		t.Errorf("error = %s", msg)
	}
}
