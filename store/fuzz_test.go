package store_test

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/haptic-io/haptic/store"
)

// FuzzIndexExpr: parsing never panics; a parsed expression prints as its
// source, and the bracket form of its path parses back to the same path.
func FuzzIndexExpr(f *testing.F) {
	for _, s := range []string{"metadata.name", `metadata.labels["kubernetes.io/service-name"]`, `a['b']`, "a..b", `a["\x00"]`} {
		f.Add(s)
	}
	obj := map[string]any{"metadata": map[string]any{"name": "n", "labels": map[string]any{"a": "b"}}}
	f.Fuzz(func(t *testing.T, s string) {
		e, err := store.ParseIndexExpr(s)
		if err != nil {
			return
		}
		if e.String() != s {
			t.Fatalf("String() = %q, want %q", e.String(), s)
		}
		path := e.Path()
		var b strings.Builder
		b.WriteString("x")
		for _, k := range path {
			b.WriteString("[" + strconv.Quote(k) + "]")
		}
		back, err := store.ParseIndexExpr(b.String())
		if err != nil {
			t.Fatalf("bracket form %q of %q does not parse: %v", b.String(), s, err)
		}
		if got := back.Path()[1:]; strings.Join(got, "\x00") != strings.Join(path, "\x00") || len(got) != len(path) {
			t.Fatalf("round trip of %q: path %q, want %q", s, got, path)
		}
		_, _ = e.Eval(obj)
	})
}

// FuzzLoadManifests: decoding never panics; every object is a mapping and
// holds only JSON-shaped values with integral numbers as int64.
func FuzzLoadManifests(f *testing.F) {
	f.Add([]byte("apiVersion: v1\nkind: Service\nmetadata: {name: a}\n---\nkind: List\nitems: [{kind: Pod}]\n"))
	f.Add([]byte(`{"kind": "List", "items": [{"a": 1e3, "b": 1.5, "c": [true, null]}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		objs, err := store.DecodeManifests(b)
		if err != nil {
			return
		}
		for _, o := range objs {
			if o == nil {
				t.Fatal("nil object")
			}
			checkJSONShaped(t, o)
		}
	})
}

func checkJSONShaped(t *testing.T, v any) {
	t.Helper()
	switch x := v.(type) {
	case map[string]any:
		for _, e := range x {
			checkJSONShaped(t, e)
		}
	case []any:
		for _, e := range x {
			checkJSONShaped(t, e)
		}
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			t.Fatalf("integral float64 %v not normalized", x)
		}
	case json.Number:
		t.Fatalf("json.Number %v leaked", x)
	case string, bool, int64, nil:
	default:
		t.Fatalf("unexpected %T", v)
	}
}
