package store_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/haptic-io/haptic/store"
)

func TestParseIndexExprWalksDotsAndBrackets(t *testing.T) {
	obj := map[string]any{
		"metadata": map[string]any{
			"namespace":  "ns",
			"labels":     map[string]any{"kubernetes.io/service-name": "web", "it's": "q"},
			"generation": int64(7),
		},
		"spec": map[string]any{"enabled": true, "ratio": 0.5, "list": []any{"a"}},
	}
	cases := []struct {
		expr  string
		path  []string
		value string
		found bool
	}{
		{"metadata.namespace", []string{"metadata", "namespace"}, "ns", true},
		{`metadata.labels["kubernetes.io/service-name"]`, []string{"metadata", "labels", "kubernetes.io/service-name"}, "web", true},
		{`metadata.labels['kubernetes.io/service-name']`, []string{"metadata", "labels", "kubernetes.io/service-name"}, "web", true},
		{`metadata["labels"]["it's"]`, []string{"metadata", "labels", "it's"}, "q", true},
		{"metadata.generation", []string{"metadata", "generation"}, "7", true},
		{"spec.enabled", []string{"spec", "enabled"}, "true", true},
		{"spec.ratio", []string{"spec", "ratio"}, "0.5", true},
		{"spec.list", []string{"spec", "list"}, "", false},
		{"spec.missing", []string{"spec", "missing"}, "", false},
		{"metadata.namespace.deeper", []string{"metadata", "namespace", "deeper"}, "", false},
		{"spec_x-y", []string{"spec_x-y"}, "", false},
	}
	for _, c := range cases {
		t.Run(c.expr, func(t *testing.T) {
			e, err := store.ParseIndexExpr(c.expr)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(c.path, e.Path()); diff != "" {
				t.Errorf("path (-want +got):\n%s", diff)
			}
			v, ok := e.Eval(obj)
			if v != c.value || ok != c.found {
				t.Errorf("Eval = %q, %v; want %q, %v", v, ok, c.value, c.found)
			}
			if e.String() != c.expr {
				t.Errorf("String = %q", e.String())
			}
		})
	}
}

func TestParseIndexExprRejectsBadSyntax(t *testing.T) {
	for _, s := range []string{"", ".a", "a.", "a..b", "a[", `a["x"`, `a["x]`, `a[x]`, `a["x"]b`, "a b", `a["\q"]`, "a/b", `a['x`} {
		t.Run(s, func(t *testing.T) {
			if _, err := store.ParseIndexExpr(s); err == nil {
				t.Errorf("ParseIndexExpr(%q) succeeded", s)
			}
		})
	}
}
