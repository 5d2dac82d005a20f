package templating_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/haptic-io/haptic/templating"
)

func aged(ns, name string, created any) map[string]any {
	o := obj(ns, name, "", nil)
	if created != nil {
		o["metadata"].(map[string]any)["creationTimestamp"] = created
	}
	return o
}

func TestSortObjectsOrdersByValueThenListOrderWithMissingLast(t *testing.T) {
	x, err := templating.ParseIndexExpr("metadata.creationTimestamp")
	if err != nil {
		t.Fatal(err)
	}
	list := []map[string]any{ // List order: namespace, name
		aged("a", "empty", ""),
		aged("a", "new", "2026-01-02T00:00:00Z"),
		aged("a", "none", nil),
		aged("b", "old", "2026-01-01T00:00:00Z"),
		aged("b", "tie", "2026-01-02T00:00:00Z"),
		aged("c", "map", map[string]any{"x": "y"}),
	}
	want := []string{"b/old", "a/new", "b/tie", "a/empty", "a/none", "c/map"}
	if diff := cmp.Diff(want, names(templating.SortObjects(list, x))); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
	if got := names(list); got[0] != "a/empty" {
		t.Errorf("SortObjects changed its input: %v", got)
	}
}

func TestSnapshotListByIsSharedUntilTheAliasChanges(t *testing.T) {
	st := newStore(t)
	for _, o := range []map[string]any{aged("a", "x", "2026-01-02T00:00:00Z"), aged("a", "y", "2026-01-01T00:00:00Z")} {
		if err := st.Add("things", o); err != nil {
			t.Fatal(err)
		}
	}
	x, _ := templating.ParseIndexExpr("metadata.creationTimestamp")
	first := st.Snapshot().ListBy("things", x)
	if diff := cmp.Diff([]string{"a/y", "a/x"}, names(first)); diff != "" {
		t.Errorf("ListBy (-want +got):\n%s", diff)
	}
	// Another alias changes: the things view, and its sorted list, stay.
	if err := st.Add("plain", obj("p", "q", "", nil)); err != nil {
		t.Fatal(err)
	}
	again := st.Snapshot().ListBy("things", x)
	if &again[0] != &first[0] {
		t.Errorf("ListBy sorted again although the alias did not change")
	}
	if err := st.Add("things", aged("a", "z", "2025-12-31T00:00:00Z")); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"a/z", "a/y", "a/x"}, names(st.ListBy("things", x))); diff != "" {
		t.Errorf("ListBy after a change (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"a/y", "a/x"}, names(first)); diff != "" {
		t.Errorf("an earlier result changed (-want +got):\n%s", diff)
	}
	if got := st.Snapshot().ListBy("nosuchalias", x); got != nil {
		t.Errorf("ListBy of an unknown alias = %v, want nil", got)
	}
}

// listOnly is a Store without ListBy: templates still get sorted lists.
type listOnly struct{ templating.Store }

func TestTemplatesListByAnIndexExpression(t *testing.T) {
	cfg := configWith(t, `{{ range .resources.ingresses.ListBy "metadata.creationTimestamp" }}{{ .metadata.name }} {{ end }}
{{- range .resources.ingresses.ListBy "metadata.creationTimestamp" }}{{ .metadata.name }} {{ end }}`, "")
	ing := func(name, ts string) map[string]any {
		o := aged("ns", name, ts)
		o["apiVersion"], o["kind"] = "networking.k8s.io/v1", "Ingress"
		return o
	}
	st, err := templating.NewMemoryStore(cfg.WatchedResources)
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
	for name, store := range map[string]templating.Store{"snapshot": st.Snapshot(), "plain store": listOnly{st.Snapshot()}} {
		out, _, err := e.Render(context.Background(), store, templating.RenderOptions{})
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
