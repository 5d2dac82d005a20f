package store_test

import (
	"errors"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/haptic-io/haptic/store"
)

func TestSnapshotWithShowsTheOverlayAndLeavesTheStoreAlone(t *testing.T) {
	st := newStore(t)
	for _, o := range []map[string]any{
		obj("a", "one", "1", map[string]any{"app.kubernetes.io/name": "web"}),
		obj("a", "two", "2", map[string]any{"app.kubernetes.io/name": "web"}),
		obj("b", "three", "3", map[string]any{"app.kubernetes.io/name": "db"}),
	} {
		if err := st.Update("things", o); err != nil {
			t.Fatal(err)
		}
	}
	byTime, err := store.ParseIndexExpr("metadata.name")
	if err != nil {
		t.Fatal(err)
	}
	before := st.Snapshot()
	_ = before.ListBy("things", byTime) // a cached ListBy result is derived, not reused

	// "two" moves from app web to db (same resourceVersion: an overlay
	// replaces whatever the versions say); "four" is new.
	cand, err := st.SnapshotWith(
		store.Overlay{Alias: "things", Object: obj("a", "two", "2", map[string]any{"app.kubernetes.io/name": "db"})},
		store.Overlay{Alias: "things", Object: obj("a", "four", "", map[string]any{"app.kubernetes.io/name": "web"})},
	)
	if err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		snap *store.Snapshot
		list []string
		web  []string
		db   []string
		by   []string
	}{
		"overlaid": {cand, []string{"a/four", "a/one", "a/two", "b/three"}, []string{"a/four", "a/one"}, []string{"a/two"}, []string{"a/four", "a/one", "b/three", "a/two"}},
		"store":    {st.Snapshot(), []string{"a/one", "a/two", "b/three"}, []string{"a/one", "a/two"}, nil, []string{"a/one", "b/three", "a/two"}},
	} {
		t.Run(name, func(t *testing.T) {
			if d := cmp.Diff(tc.list, names(tc.snap.List("things"))); d != "" {
				t.Errorf("List (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tc.web, nilIfEmpty(names(tc.snap.Fetch("things", "a", "web")))); d != "" {
				t.Errorf("Fetch a web (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tc.db, nilIfEmpty(names(tc.snap.Fetch("things", "a", "db")))); d != "" {
				t.Errorf("Fetch a db (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tc.by, names(tc.snap.ListBy("things", byTime))); d != "" {
				t.Errorf("ListBy name (-want +got):\n%s", d)
			}
		})
	}
	if st.Snapshot() != before {
		t.Error("SnapshotWith changed the store's snapshot")
	}
	if got, ok := cand.Get("plain", "x", "y"); ok || got != nil {
		t.Errorf("untouched alias: Get = %v, %v", got, ok)
	}
}

func TestSnapshotWithIsOnNoChangeLogForTheOverlaidAlias(t *testing.T) {
	st := newStore(t)
	if err := st.Update("things", obj("a", "one", "1", nil)); err != nil {
		t.Fatal(err)
	}
	if err := st.Update("plain", obj("a", "p", "1", nil)); err != nil {
		t.Fatal(err)
	}
	base := st.Snapshot()
	cand, err := st.SnapshotWith(store.Overlay{Alias: "things", Object: obj("a", "two", "", nil)})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := cand.ChangesSince("things", base.Mark("things")); ok {
		t.Error("overlaid alias: ChangesSince(base) is known; want unknown")
	}
	if cs, ok := cand.ChangesSince("plain", base.Mark("plain")); !ok || len(cs.IDs) != 0 {
		t.Errorf("untouched alias: ChangesSince(base) = %v, %v; want no change, known", cs, ok)
	}
	// A later real snapshot does not take the overlay for one of its own
	// changes.
	if err := st.Update("things", obj("a", "three", "3", nil)); err != nil {
		t.Fatal(err)
	}
	if _, ok := st.Snapshot().ChangesSince("things", cand.Mark("things")); ok {
		t.Error("later snapshot: ChangesSince(overlaid) is known; want unknown")
	}
	if cs, ok := st.Snapshot().ChangesSince("things", base.Mark("things")); !ok || !cs.IDs["a\x00three"] || len(cs.IDs) != 1 {
		t.Errorf("later snapshot: ChangesSince(base) = %v, %v; want a/three only", cs.IDs, ok)
	}
}

func TestSnapshotWithRefusesUnknownAliasesAndNamelessObjects(t *testing.T) {
	st := newStore(t)
	if _, err := st.SnapshotWith(store.Overlay{Alias: "nope", Object: obj("a", "x", "", nil)}); !errors.Is(err, store.ErrUnknownAlias) {
		t.Errorf("unknown alias: err = %v, want ErrUnknownAlias", err)
	}
	if _, err := st.SnapshotWith(store.Overlay{Alias: "things", Object: map[string]any{"metadata": map[string]any{}}}); err == nil {
		t.Error("object without a name: no error")
	}
	o := obj("a", "x", "", nil)
	if _, err := st.SnapshotWith(store.Overlay{Alias: "things", Object: o}, store.Overlay{Alias: "things", Object: o}); err == nil {
		t.Error("the same object twice: no error")
	}
}

func TestSnapshotWithWhileTheStoreChanges(t *testing.T) {
	st := newStore(t)
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := range 200 {
			if err := st.Update("things", obj("a", "n", string(rune('a'+i%26)), nil)); err != nil {
				t.Error(err)
				return
			}
		}
	})
	for range 200 {
		snap, err := st.SnapshotWith(store.Overlay{Alias: "things", Object: obj("a", "cand", "", nil)})
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := snap.Get("things", "a", "cand"); !ok {
			t.Fatal("overlay missing")
		}
	}
	wg.Wait()
}

func nilIfEmpty(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
}
