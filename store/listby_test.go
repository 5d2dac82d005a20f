package store_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/haptic-io/haptic/store"
)

func aged(ns, name string, created any) map[string]any {
	o := obj(ns, name, "", nil)
	if created != nil {
		o["metadata"].(map[string]any)["creationTimestamp"] = created
	}
	return o
}

func TestSortObjectsOrdersByValueThenListOrderWithMissingLast(t *testing.T) {
	x, err := store.ParseIndexExpr("metadata.creationTimestamp")
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
	if diff := cmp.Diff(want, names(store.SortObjects(list, x))); diff != "" {
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
	x, _ := store.ParseIndexExpr("metadata.creationTimestamp")
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
