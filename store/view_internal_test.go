package store

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestPatchSortedSplicesChangesInAtTheirPositions(t *testing.T) {
	o := func(name string) map[string]any {
		return map[string]any{"metadata": map[string]any{"namespace": "ns", "name": name}}
	}
	objs := map[string]map[string]any{}
	for _, n := range []string{"b", "d", "f", "h"} {
		objs[n] = o(n)
	}
	ranked := func(names ...string) []rankedObj {
		var out []rankedObj
		for _, n := range names {
			obj := objs[n]
			if obj == nil {
				obj = o(n)
			}
			out = append(out, rankedObj{rank: listRank(obj), obj: obj})
		}
		return out
	}
	old := []map[string]any{objs["b"], objs["d"], objs["f"], objs["h"]}
	cases := []struct {
		name       string
		dels, adds []string
		want       []string
		ok         bool
	}{
		{"nothing", nil, nil, []string{"b", "d", "f", "h"}, true},
		{"add first, middle and last", nil, []string{"i", "a", "e"}, []string{"a", "b", "d", "e", "f", "h", "i"}, true},
		{"delete first and last", []string{"h", "b"}, nil, []string{"d", "f"}, true},
		{"delete all", []string{"b", "d", "f", "h"}, nil, []string{}, true},
		{"replace in place", []string{"d"}, []string{"d"}, []string{"b", "d", "f", "h"}, true},
		{"delete and add beside", []string{"d", "f"}, []string{"e", "c", "g"}, []string{"b", "c", "e", "g", "h"}, true},
		{"add before a deleted one", []string{"b"}, []string{"a"}, []string{"a", "d", "f", "h"}, true},
		{"delete a missing one", []string{"c"}, nil, nil, false},
		{"add a present one", nil, []string{"f"}, nil, false},
		{"add one twice", nil, []string{"c", "c"}, nil, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, ok := patchSorted(old, listRank, ranked(c.dels...), ranked(c.adds...))
			if ok != c.ok {
				t.Fatalf("ok = %v, want %v", ok, c.ok)
			}
			if !ok {
				return
			}
			var names []string
			for _, g := range got {
				names = append(names, listRank(g).name)
			}
			if diff := cmp.Diff(c.want, names, cmpEmptyIsNil); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if listRank(old[0]).name != "b" || len(old) != 4 || listRank(old[3]).name != "h" {
				t.Error("patchSorted changed its input")
			}
		})
	}
}

var cmpEmptyIsNil = cmp.Transformer("emptyIsNil", func(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
})

func TestCompareRankPutsValuesFirstThenNamespaceAndName(t *testing.T) {
	ordered := []objRank{
		{val: "1", ns: "b", name: "a"},
		{val: "2", ns: "a", name: "z"},
		{val: "2", ns: "b", name: "a"},
		{val: "2", ns: "b", name: "b"},
		{missing: true, ns: "a", name: "a"},
		{missing: true, ns: "a", name: "b"},
	}
	for i := range ordered {
		for j := range ordered {
			got := compareRank(ordered[i], ordered[j])
			want := 0
			if i < j {
				want = -1
			} else if i > j {
				want = 1
			}
			if got != want {
				t.Errorf("compareRank(%v, %v) = %d, want %d", ordered[i], ordered[j], got, want)
			}
		}
	}
}

func TestListByResultsAreDerivedWhileAskedForAndDroppedWhenNot(t *testing.T) {
	st, err := NewMemory(map[string]WatchedResource{"things": {}})
	if err != nil {
		t.Fatal(err)
	}
	byName, _ := ParseIndexExpr("metadata.name")
	byNS, _ := ParseIndexExpr("metadata.namespace")
	update := func(i int) *Snapshot {
		t.Helper()
		o := map[string]any{"metadata": map[string]any{"namespace": "ns", "name": fmt.Sprintf("o%d", i%5), "resourceVersion": fmt.Sprint(i)}}
		if err := st.Update("things", o); err != nil {
			t.Fatal(err)
		}
		return st.Snapshot()
	}
	snap := update(0)
	snap.ListBy("things", byName)
	snap.ListBy("things", byNS)
	for i := 1; i <= maxIdleViews+1; i++ {
		snap = update(i)
		_, derived := snap.views["things"].sorted.m[byNS.String()]
		if want := i <= maxIdleViews; derived != want {
			t.Fatalf("after %d unasked views: byNS derived = %v, want %v", i, derived, want)
		}
		if _, derived := snap.views["things"].sorted.m[byName.String()]; !derived {
			t.Fatalf("after %d views: the byName result asked for each time was not derived", i)
		}
		snap.ListBy("things", byName)
	}
	if st.stats.fallbacks != 0 {
		t.Errorf("%d fallbacks", st.stats.fallbacks)
	}
}
