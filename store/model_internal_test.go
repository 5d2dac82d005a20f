package store

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The model-based test drives a Memory with random Update, Delete and
// Replace calls and checks every snapshot, by the addresses of the objects
// it returns, against a store built afresh from the same objects and
// against a naive model, and checks that every earlier snapshot still
// answers as it did.

var modelResources = map[string]WatchedResource{
	"things": {IndexBy: []string{"metadata.namespace", `metadata.labels["app"]`}},
	"byage":  {IndexBy: []string{"metadata.creationTimestamp"}},
	"plain":  {},
}

var (
	modelNamespaces = []string{"a", "a-b", "b", ""}
	modelApps       = []any{"web", "db", "", nil, int64(3)}
	modelTimes      = []any{"2026-01-01", "2026-01-02", "2026-01-03", "", nil, map[string]any{"x": "y"}, int64(7), 2.5, true}
	modelExprs      = []string{"metadata.creationTimestamp", `metadata.labels["app"]`, "metadata.name", "spec.n"}
)

// modelRun is one random run: the store under test and what it should hold.
type modelRun struct {
	rng   *rand.Rand
	names []string
	st    *Memory
	want  map[string]map[string]map[string]any // alias, id: object
	exprs []IndexExpr
}

func newModelRun(t *testing.T, seed uint64) *modelRun {
	t.Helper()
	st, err := NewMemory(modelResources)
	if err != nil {
		t.Fatal(err)
	}
	r := &modelRun{rng: rand.New(rand.NewPCG(seed, 99)), st: st, want: map[string]map[string]map[string]any{}}
	// Some runs have few names (many collisions), some enough for a
	// Replace to pass the rebuild threshold.
	n := []int{3, 12, 40, 150}[seed%4]
	for i := range n {
		r.names = append(r.names, fmt.Sprintf("o%d", i))
	}
	for alias := range modelResources {
		r.want[alias] = map[string]map[string]any{}
	}
	for _, src := range modelExprs {
		x, err := ParseIndexExpr(src)
		if err != nil {
			t.Fatal(err)
		}
		r.exprs = append(r.exprs, x)
	}
	return r
}

func pick[T any](rng *rand.Rand, xs []T) T { return xs[rng.IntN(len(xs))] }

// object returns a random object; its resourceVersion is often one seen
// before, so updates are often no-ops (and then carry other content).
func (r *modelRun) object() map[string]any {
	md := map[string]any{"namespace": pick(r.rng, modelNamespaces), "name": pick(r.rng, r.names)}
	if rv := r.rng.IntN(5); rv > 0 {
		md["resourceVersion"] = fmt.Sprint(rv)
	}
	if ts := pick(r.rng, modelTimes); ts != nil {
		md["creationTimestamp"] = ts
	}
	if app := pick(r.rng, modelApps); app != nil {
		md["labels"] = map[string]any{"app": app}
	}
	o := map[string]any{"metadata": md}
	if r.rng.IntN(2) == 0 {
		o["spec"] = map[string]any{"n": int64(r.rng.IntN(4))}
	}
	return o
}

func modelID(o map[string]any) string {
	ns, name, _ := ObjectMeta(o)
	return ns + "\x00" + name
}

// update applies the store's rule to the model: an equal non-empty
// resourceVersion keeps the stored object.
func (r *modelRun) update(alias string, o map[string]any) {
	id := modelID(o)
	if old, ok := r.want[alias][id]; ok {
		_, _, orv := ObjectMeta(old)
		if _, _, rv := ObjectMeta(o); rv != "" && rv == orv {
			return
		}
	}
	r.want[alias][id] = o
}

// step makes 0 to 4 random changes.
func (r *modelRun) step(t *testing.T) {
	t.Helper()
	for range r.rng.IntN(5) {
		alias := pick(r.rng, []string{"things", "things", "things", "byage", "plain"})
		switch p := r.rng.IntN(100); {
		case p < 60:
			o := r.object()
			if err := r.st.Update(alias, o); err != nil {
				t.Fatal(err)
			}
			r.update(alias, o)
		case p < 90:
			o := r.object()
			ns, name, _ := ObjectMeta(o)
			if r.rng.IntN(2) == 0 && len(r.want[alias]) > 0 { // mostly delete what is there
				ids := slices.Sorted(maps.Keys(r.want[alias]))
				ns, name, _ = ObjectMeta(r.want[alias][pick(r.rng, ids)])
			}
			if err := r.st.Delete(alias, ns, name); err != nil {
				t.Fatal(err)
			}
			delete(r.want[alias], ns+"\x00"+name)
		default:
			var objs []map[string]any
			for _, o := range r.want[alias] { // keep some, with their resourceVersions
				if r.rng.IntN(3) > 0 {
					c := maps.Clone(o)
					c["replaced"] = true
					objs = append(objs, c)
				}
			}
			for range r.rng.IntN(2 * len(r.names)) {
				objs = append(objs, r.object())
			}
			r.rng.Shuffle(len(objs), func(i, j int) { objs[i], objs[j] = objs[j], objs[i] })
			if err := r.st.Replace(alias, objs); err != nil {
				t.Fatal(err)
			}
			before := r.want[alias]
			r.want[alias] = map[string]map[string]any{}
			for _, o := range objs {
				if old, ok := before[modelID(o)]; ok {
					r.want[alias][modelID(o)] = old
				}
			}
			for _, o := range objs {
				r.update(alias, o)
			}
		}
	}
}

// describe lists what s answers to every query the test asks, naming each
// object by its address (objects are compared by identity).
func (r *modelRun) describe(s reader) []string {
	var out []string
	addrs := func(objs []map[string]any) string {
		var b strings.Builder
		for _, o := range objs {
			ns, name, _ := ObjectMeta(o)
			fmt.Fprintf(&b, "%s/%s@%p ", ns, name, o)
		}
		return b.String()
	}
	for _, alias := range []string{"things", "byage", "plain", "unknown"} {
		out = append(out, fmt.Sprintf("%s List: %s", alias, addrs(s.List(alias))))
		for _, ns := range modelNamespaces {
			for _, name := range append(r.names, "missing") {
				if o, ok := s.Get(alias, ns, name); ok {
					out = append(out, fmt.Sprintf("%s Get %s/%s: %p", alias, ns, name, o))
				}
			}
		}
		keys := [][]string{{}, {"zzz"}, {"a", "web", "x"}}
		for _, ns := range modelNamespaces {
			keys = append(keys, []string{ns})
			for _, app := range []string{"web", "db", "", "3"} {
				keys = append(keys, []string{ns, app})
			}
		}
		for _, ts := range []string{"2026-01-01", "2026-01-02", "", "7", "2.5", "true"} {
			keys = append(keys, []string{ts})
		}
		for _, k := range keys {
			out = append(out, fmt.Sprintf("%s Fetch %q: %s", alias, k, addrs(s.Fetch(alias, k...))))
		}
		for i, x := range r.exprs {
			if i%2 == 0 || alias == "things" {
				out = append(out, fmt.Sprintf("%s ListBy %s: %s", alias, x, addrs(s.ListBy(alias, x))))
			}
		}
	}
	return out
}

// freshSnapshot builds a new store from the model's objects.
func (r *modelRun) freshSnapshot(t *testing.T) *Snapshot {
	t.Helper()
	st, err := NewMemory(modelResources)
	if err != nil {
		t.Fatal(err)
	}
	for alias, objs := range r.want {
		for _, o := range objs {
			if err := st.Update(alias, o); err != nil {
				t.Fatal(err)
			}
		}
	}
	return st.Snapshot()
}

// naiveStore answers from the model alone.
type naiveStore struct {
	objs  map[string]map[string]map[string]any
	lists map[string][]map[string]any
	exprs map[string][]IndexExpr
}

func newNaiveStore(objs map[string]map[string]map[string]any, exprs map[string][]IndexExpr) naiveStore {
	n := naiveStore{objs: objs, lists: map[string][]map[string]any{}, exprs: exprs}
	for alias, m := range objs {
		l := slices.Collect(maps.Values(m))
		slices.SortFunc(l, func(a, b map[string]any) int { return compareRank(listRank(a), listRank(b)) })
		n.lists[alias] = l
	}
	return n
}

func (n naiveStore) List(alias string) []map[string]any { return n.lists[alias] }

func (n naiveStore) Get(alias, ns, name string) (map[string]any, bool) {
	o, ok := n.objs[alias][ns+"\x00"+name]
	return o, ok
}

func (n naiveStore) Fetch(alias string, keys ...string) []map[string]any {
	if len(keys) > len(n.exprs[alias]) {
		return nil
	}
	var out []map[string]any
	for _, o := range n.List(alias) {
		match := true
		for i, k := range keys {
			v, _ := n.exprs[alias][i].Eval(o)
			match = match && v == k
		}
		if match {
			out = append(out, o)
		}
	}
	return out
}

func (n naiveStore) ListBy(alias string, x IndexExpr) []map[string]any {
	return SortObjects(n.List(alias), x)
}

func TestMemorySnapshotsMatchAFreshStoreAfterRandomChanges(t *testing.T) {
	seeds := uint64(40)
	if testing.Short() {
		seeds = 8
	}
	var total viewStats
	known := 0 // snapshot pairs whose changes the log told
	for seed := range seeds {
		r := newModelRun(t, seed)
		exprs := map[string][]IndexExpr{}
		for alias, st := range r.st.aliases {
			exprs[alias] = st.exprs
		}
		type taken struct {
			snap *Snapshot
			want []string
		}
		var history []taken
		prev := r.st.Snapshot()
		for step := range 40 {
			gen := r.st.Generation()
			r.step(t)
			snap := r.st.Snapshot()
			if r.st.Generation() == gen && snap != prev {
				t.Fatalf("seed %d step %d: a new snapshot without a change", seed, step)
			}
			prev = snap
			// Ask for some ListBy results now, so that the next snapshot
			// derives those and sorts the others afresh.
			for _, x := range r.exprs {
				if r.rng.IntN(2) == 0 {
					snap.ListBy("things", x)
				}
			}
			want := r.describe(newNaiveStore(r.want, exprs))
			if got := r.describe(r.freshSnapshot(t)); !slices.Equal(want, got) {
				diff := cmp.Diff(want, got)
				t.Fatalf("seed %d step %d: a fresh store disagrees with the model (-want +got):\n%s", seed, step, diff)
			}
			if got := r.describe(snap); !slices.Equal(want, got) {
				diff := cmp.Diff(want, got)
				t.Fatalf("seed %d step %d: snapshot (-want +got):\n%s", seed, step, diff)
			}
			checkIndexSizes(t, snap, r.want, exprs)
			history = append(history, taken{snap, want})
		}
		for i, h := range history {
			if got := r.describe(h.snap); !slices.Equal(h.want, got) {
				diff := cmp.Diff(h.want, got)
				t.Fatalf("seed %d: snapshot %d changed later (-want +got):\n%s", seed, i, diff)
			}
		}
		for i := range history {
			for j := i; j < len(history); j++ {
				known += checkChangedSince(t, history[i].snap, history[j].snap, exprs)
			}
		}
		if r.st.stats.fallbacks != 0 {
			t.Errorf("seed %d: %d views or ListBy results were sorted afresh", seed, r.st.stats.fallbacks)
		}
		total.built += r.st.stats.built
		total.derived += r.st.stats.derived
	}
	// Both ways to a view ran: the first snapshot and big Replaces build,
	// the rest derive.
	t.Logf("views built %d, derived %d; change sets known for %d snapshot pairs", total.built, total.derived, known)
	if known == 0 {
		t.Error("ChangesSince never knew what changed")
	}
	if total.built <= int(seeds)*len(modelResources) || total.derived == 0 {
		t.Errorf("views built %d, derived %d: a way to a view went untested", total.built, total.derived)
	}
}

// checkIndexSizes checks that a snapshot's maps hold no keys beyond the
// model's (an emptied index bucket goes).
func checkIndexSizes(t *testing.T, snap *Snapshot, want map[string]map[string]map[string]any, exprs map[string][]IndexExpr) {
	t.Helper()
	for alias, v := range snap.views {
		if v.byName.size() != len(want[alias]) {
			t.Fatalf("%s: byName holds %d keys, want %d", alias, v.byName.size(), len(want[alias]))
		}
		for k := range v.index {
			keys := map[string]bool{}
			for _, o := range want[alias] {
				var vals []string
				for _, x := range exprs[alias][:k+1] {
					val, _ := x.Eval(o)
					vals = append(vals, val)
				}
				keys[strings.Join(vals, "\x00")] = true
			}
			if v.index[k].size() != len(keys) {
				t.Fatalf("%s: index %d holds %d keys, want %d", alias, k, v.index[k].size(), len(keys))
			}
		}
	}
}

// checkChangedSince checks that what cur.ChangesSince(prev.Mark) reports, when
// it knows, covers every object and index key whose objects differ
// between the two snapshots; it returns how many aliases it knew for.
func checkChangedSince(t *testing.T, prev, cur *Snapshot, exprs map[string][]IndexExpr) int {
	t.Helper()
	known := 0
	for alias, xs := range exprs {
		cs, ok := cur.ChangesSince(alias, prev.Mark(alias))
		if !ok {
			continue
		}
		known++
		objs := append(slices.Clone(prev.List(alias)), cur.List(alias)...)
		for _, o := range objs {
			ns, name, _ := ObjectMeta(o)
			a, _ := prev.Get(alias, ns, name)
			b, _ := cur.Get(alias, ns, name)
			if !sameObject(a, b) && !cs.IDs[ns+"\x00"+name] {
				t.Fatalf("%s %s/%s changed between the snapshots, not in the change set", alias, ns, name)
			}
			var vals []string
			for _, x := range xs {
				v, _ := x.Eval(o)
				vals = append(vals, v)
				if !slices.EqualFunc(prev.Fetch(alias, vals...), cur.Fetch(alias, vals...), sameObject) && !cs.Keys[strings.Join(vals, "\x00")] {
					t.Fatalf("%s: index key %q lists other objects, not in the change set", alias, vals)
				}
			}
		}
	}
	return known
}

// reader is what describe queries: a [Memory] or a [Snapshot].
type reader interface {
	List(alias string) []map[string]any
	Get(alias, namespace, name string) (map[string]any, bool)
	Fetch(alias string, keys ...string) []map[string]any
	ListBy(alias string, expr IndexExpr) []map[string]any
}

// sameObject reports whether a and b are the same map (not equal ones).
func sameObject(a, b map[string]any) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}
