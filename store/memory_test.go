package store_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/haptic-io/haptic/store"
)

func obj(ns, name, rv string, labels map[string]any) map[string]any {
	md := map[string]any{"namespace": ns, "name": name}
	if rv != "" {
		md["resourceVersion"] = rv
	}
	if labels != nil {
		md["labels"] = labels
	}
	return map[string]any{"apiVersion": "v1", "kind": "Thing", "metadata": md}
}

func names(objs []map[string]any) []string {
	out := []string{}
	for _, o := range objs {
		md := o["metadata"].(map[string]any)
		ns, _ := md["namespace"].(string)
		out = append(out, ns+"/"+md["name"].(string))
	}
	return out
}

func newStore(t *testing.T) *store.Memory {
	t.Helper()
	st, err := store.NewMemory(map[string]store.WatchedResource{
		"things": {APIVersion: "v1", Resource: "things", IndexBy: []string{"metadata.namespace", `metadata.labels["app.kubernetes.io/name"]`}},
		"plain":  {APIVersion: "v1", Resource: "plains"},
	})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func TestMemoryListsSortedAndFetchesByIndexPrefix(t *testing.T) {
	st := newStore(t)
	add := func(ns, name, app string) {
		t.Helper()
		if err := st.Add("things", obj(ns, name, "", map[string]any{"app.kubernetes.io/name": app})); err != nil {
			t.Fatal(err)
		}
	}
	add("b", "x", "web")
	add("a", "z", "web")
	add("a-b", "y", "db") // "a-b" sorts after "a" as a namespace
	add("a", "y", "db")
	add("a", "x", "web")
	if err := st.Add("things", obj("a", "nolabel", "", nil)); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		got  []map[string]any
		want []string
	}{
		{"list", st.List("things"), []string{"a/nolabel", "a/x", "a/y", "a/z", "a-b/y", "b/x"}},
		{"fetch both keys", st.Fetch("things", "a", "web"), []string{"a/x", "a/z"}},
		{"fetch prefix", st.Fetch("things", "a"), []string{"a/nolabel", "a/x", "a/y", "a/z"}},
		{"fetch missing label", st.Fetch("things", "a", ""), []string{"a/nolabel"}},
		{"fetch no keys", st.Fetch("things"), []string{"a/nolabel", "a/x", "a/y", "a/z", "a-b/y", "b/x"}},
		{"fetch too many keys", st.Fetch("things", "a", "web", "x"), []string{}},
		{"unknown alias", st.List("nope"), []string{}},
		{"empty alias", st.List("plain"), []string{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if diff := cmp.Diff(c.want, names(c.got)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	if o, ok := st.Get("things", "a-b", "y"); !ok || o["metadata"].(map[string]any)["name"] != "y" {
		t.Errorf("Get a-b/y = %v, %v", o, ok)
	}
	if _, ok := st.Get("things", "a", "b/y"); ok {
		t.Error("Get found a/b/y")
	}
}

func TestMemoryUpdatesDeletesAndKeepsSnapshotsImmutable(t *testing.T) {
	st := newStore(t)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(st.Add("things", obj("a", "x", "1", map[string]any{"app.kubernetes.io/name": "web"})))
	must(st.Add("things", obj("a", "y", "1", map[string]any{"app.kubernetes.io/name": "web"})))
	before := st.Snapshot()
	gen := st.Generation()

	must(st.Update("things", obj("a", "x", "1", map[string]any{"app.kubernetes.io/name": "db"})))
	if st.Generation() != gen || st.Snapshot() != before {
		t.Error("an update with the same resourceVersion changed the store")
	}
	must(st.Update("things", obj("a", "x", "2", map[string]any{"app.kubernetes.io/name": "db"})))
	must(st.Delete("things", "a", "y"))
	must(st.Delete("things", "a", "never-there"))
	after := st.Snapshot()

	if diff := cmp.Diff([]string{"a/x", "a/y"}, names(before.Fetch("things", "a", "web"))); diff != "" {
		t.Errorf("old snapshot changed (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{}, names(after.Fetch("things", "a", "web"))); diff != "" {
		t.Errorf("new snapshot web (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"a/x"}, names(after.Fetch("things", "a", "db"))); diff != "" {
		t.Errorf("new snapshot db (-want +got):\n%s", diff)
	}
	if st.Generation() <= gen {
		t.Error("generation did not grow")
	}
	if st.Snapshot() != after {
		t.Error("a snapshot without changes is not reused")
	}

	must(st.Replace("things", []map[string]any{obj("c", "only", "", nil)}))
	if diff := cmp.Diff([]string{"c/only"}, names(st.List("things"))); diff != "" {
		t.Errorf("after replace (-want +got):\n%s", diff)
	}
}

func TestMemoryRefusesUnknownAliasesAndNamelessObjects(t *testing.T) {
	st := newStore(t)
	if err := st.Add("nope", obj("a", "x", "", nil)); !errors.Is(err, store.ErrUnknownAlias) {
		t.Errorf("Add to unknown alias: %v", err)
	}
	if err := st.Delete("nope", "a", "x"); !errors.Is(err, store.ErrUnknownAlias) {
		t.Errorf("Delete from unknown alias: %v", err)
	}
	if err := st.Replace("nope", nil); !errors.Is(err, store.ErrUnknownAlias) {
		t.Errorf("Replace unknown alias: %v", err)
	}
	if err := st.Add("things", map[string]any{"metadata": map[string]any{}}); err == nil {
		t.Error("Add of an object without a name succeeded")
	}
	if _, err := store.NewMemory(map[string]store.WatchedResource{"x": {IndexBy: []string{"a["}}}); err == nil {
		t.Error("NewMemory accepted a bad indexBy")
	}
}

func TestMemoryAddObjectsRoutesByAPIVersionAndKind(t *testing.T) {
	st, err := store.NewMemory(map[string]store.WatchedResource{
		"svc":  {APIVersion: "v1", Resource: "services"},
		"svc2": {APIVersion: "v1", Resource: "services"},
		"ing":  {APIVersion: "networking.k8s.io/v1", Resource: "ingresses"},
	})
	if err != nil {
		t.Fatal(err)
	}
	n, err := st.AddObjects(
		map[string]any{"apiVersion": "v1", "kind": "Service", "metadata": map[string]any{"name": "s"}},
		map[string]any{"apiVersion": "networking.k8s.io/v1beta1", "kind": "Ingress", "metadata": map[string]any{"name": "old"}},
		map[string]any{"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": map[string]any{"name": "i"}},
		map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "c"}},
	)
	if err != nil || n != 2 {
		t.Fatalf("AddObjects = %d, %v; want 2", n, err)
	}
	for alias, want := range map[string][]string{"svc": {"/s"}, "svc2": {"/s"}, "ing": {"/i"}} {
		if diff := cmp.Diff(want, names(st.List(alias))); diff != "" {
			t.Errorf("%s (-want +got):\n%s", alias, diff)
		}
	}
}

func TestMemoryIsSafeForConcurrentUse(t *testing.T) {
	st := newStore(t)
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				o := obj("ns", fmt.Sprintf("o-%d-%d", w, i%20), fmt.Sprintf("%d", i), nil)
				_ = st.Update("things", o)
				snap := st.Snapshot()
				_ = snap.List("things")
				_ = snap.Fetch("things", "ns")
				if i%3 == 0 {
					_ = st.Delete("things", "ns", fmt.Sprintf("o-%d-%d", w, i%20))
				}
			}
		}()
	}
	wg.Wait()
	if got := len(st.List("things")); got > 80 {
		t.Errorf("%d objects, want at most 80", got)
	}
}

func TestSnapshotAfterOneChangeSharesWhatDidNotChange(t *testing.T) {
	st := newStore(t)
	for i := 0; i < 50; i++ {
		ns := []string{"a", "b"}[i%2]
		if err := st.Add("things", obj(ns, fmt.Sprintf("o%d", i), "1", map[string]any{"app.kubernetes.io/name": "web"})); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Add("plain", obj("p", "q", "", nil)); err != nil {
		t.Fatal(err)
	}
	before := st.Snapshot()
	if err := st.Update("things", obj("a", "o0", "2", map[string]any{"app.kubernetes.io/name": "db"})); err != nil {
		t.Fatal(err)
	}
	after := st.Snapshot()
	if b, a := before.Fetch("things", "b"), after.Fetch("things", "b"); len(a) != 25 || &a[0] != &b[0] {
		t.Error("the objects of namespace b were copied although none changed")
	}
	if b, a := before.List("plain"), after.List("plain"); len(a) != 1 || &a[0] != &b[0] {
		t.Error("an unchanged alias got a new list")
	}
	if diff := cmp.Diff([]string{"a/o0"}, names(after.Fetch("things", "a", "db"))); diff != "" {
		t.Errorf("moved object (-want +got):\n%s", diff)
	}
	if got := len(after.Fetch("things", "a", "web")); got != 24 {
		t.Errorf("a/web holds %d objects, want 24", got)
	}
	if got := len(before.Fetch("things", "a", "web")); got != 25 {
		t.Errorf("the earlier snapshot's a/web holds %d objects, want 25", got)
	}
}

func TestSnapshotsStayConsistentWhileTheStoreChanges(t *testing.T) {
	st := newStore(t)
	byAge, err := store.ParseIndexExpr("metadata.creationTimestamp")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // the informer
		defer wg.Done()
		for i := 0; i < 400; i++ {
			o := aged("ns", fmt.Sprintf("o%d", i%37), fmt.Sprintf("2026-01-%02d", i%5))
			o["metadata"].(map[string]any)["resourceVersion"] = fmt.Sprintf("%d", i)
			_ = st.Update("things", o)
			if i%7 == 0 {
				_ = st.Delete("things", "ns", fmt.Sprintf("o%d", (i*3)%37))
			}
			st.Snapshot()
		}
	}()
	errs := make(chan string, 4)
	for r := 0; r < 3; r++ {
		wg.Add(1)
		go func() { // renders
			defer wg.Done()
			for i := 0; i < 200; i++ {
				snap := st.Snapshot()
				list := snap.List("things")
				sorted := snap.ListBy("things", byAge)
				if diff := cmp.Diff(names(store.SortObjects(list, byAge)), names(sorted)); diff != "" {
					errs <- "ListBy disagrees with SortObjects(List) (-want +got):\n" + diff
					return
				}
				if got := len(snap.Fetch("things", "ns")); got != len(list) {
					errs <- fmt.Sprintf("Fetch ns gave %d objects, List %d", got, len(list))
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}
