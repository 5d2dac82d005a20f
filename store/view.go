package store

import (
	"slices"
	"strings"
)

// An aliasView is one alias's objects as a [Snapshot] shows them. It is
// immutable once built (its ListBy cache only fills), and shared by every
// snapshot until the alias changes. The view after a few changes is
// derived from the previous one (deriveView): the sorted slices are
// copied with the changes spliced in at their binary-searched positions,
// and the maps are hash tries that share all but the changed paths, so a
// snapshot after k changes to an alias of n objects costs O(k log n) plus
// copying the slices the changes touch.
type aliasView struct {
	list   []map[string]any
	byName hashTrie[map[string]any] // by namespace NUL name
	// index[k-1] maps the first k indexBy values, joined by NUL, to the
	// matching objects in List order.
	index []hashTrie[[]map[string]any]
	// sorted caches ListBy results (see listby.go).
	sorted sortedCache
	// log and logged are the change log this view is on and the entries
	// up to it (changelog.go); nil for a view on no log.
	log    *changeLog
	logged []changeEntry
}

// entryChange is one object's change since the previous view: old is the
// entry that view holds, new the current one; either may be nil.
type entryChange struct {
	old, new *storeEntry
}

// objRank is an object's position in a sorted list: List sorts by
// namespace, then name; ListBy first by the expression's value (objects
// without one last, as missing), then like List. Names are unique within
// an alias, so ranks are too.
type objRank struct {
	missing  bool
	val      string
	ns, name string
}

func compareRank(a, b objRank) int {
	if a.missing != b.missing {
		if a.missing {
			return 1
		}
		return -1
	}
	if c := strings.Compare(a.val, b.val); c != 0 {
		return c
	}
	if c := strings.Compare(a.ns, b.ns); c != 0 {
		return c
	}
	return strings.Compare(a.name, b.name)
}

// listRank ranks obj in List order.
func listRank(obj map[string]any) objRank {
	ns, name, _ := ObjectMeta(obj)
	return objRank{ns: ns, name: name}
}

// exprRank ranks obj in ListBy order for expr, as [SortObjects] does.
func exprRank(expr IndexExpr, obj map[string]any) objRank {
	ns, name, _ := ObjectMeta(obj)
	v, ok := expr.Eval(obj)
	if !ok || v == "" {
		return objRank{missing: true, ns: ns, name: name}
	}
	return objRank{val: v, ns: ns, name: name}
}

type rankedObj struct {
	rank objRank
	obj  map[string]any
}

// patchSorted returns a new slice: old (sorted by rankOf) without dels and
// with adds, still sorted. It binary-searches each change's position and
// copies old once, segment by segment. dels and adds are reordered. ok is
// false when a del is not in old or an add's rank is already there and not
// deleted: old was not sorted as rankOf says (an object changed after it
// was stored), and the caller must sort afresh.
func patchSorted(old []map[string]any, rankOf func(map[string]any) objRank, dels, adds []rankedObj) (_ []map[string]any, ok bool) {
	byRank := func(a, b rankedObj) int { return compareRank(a.rank, b.rank) }
	slices.SortFunc(dels, byRank)
	slices.SortFunc(adds, byRank)
	search := func(r objRank) (int, bool) {
		return slices.BinarySearchFunc(old, r, func(o map[string]any, r objRank) int { return compareRank(rankOf(o), r) })
	}
	delAt := make([]int, len(dels))
	for i, d := range dels {
		p, found := search(d.rank)
		if !found || (i > 0 && p <= delAt[i-1]) {
			return nil, false
		}
		delAt[i] = p
	}
	addAt := make([]int, len(adds))
	for i, a := range adds {
		p, found := search(a.rank)
		if found {
			if _, deleted := slices.BinarySearch(delAt, p); !deleted {
				return nil, false
			}
		}
		if i > 0 && compareRank(adds[i-1].rank, a.rank) == 0 {
			return nil, false
		}
		addAt[i] = p
	}
	out := make([]map[string]any, 0, len(old)-len(dels)+len(adds))
	next, di, ai := 0, 0, 0 // next: the first element of old not yet copied or dropped
	for di < len(dels) || ai < len(adds) {
		if ai < len(adds) && (di == len(dels) || addAt[ai] <= delAt[di]) {
			out = append(out, old[next:addAt[ai]]...)
			out = append(out, adds[ai].obj)
			next = addAt[ai]
			ai++
			continue
		}
		out = append(out, old[next:delAt[di]]...)
		next = delAt[di] + 1
		di++
	}
	return append(out, old[next:]...), true
}

// buildView builds an alias's view from scratch: O(n log n).
func buildView(st *aliasState) *aliasView {
	entries := make([]*storeEntry, 0, len(st.objs))
	for _, e := range st.objs {
		entries = append(entries, e)
	}
	slices.SortFunc(entries, func(a, b *storeEntry) int {
		if c := strings.Compare(a.namespace, b.namespace); c != 0 {
			return c
		}
		return strings.Compare(a.name, b.name)
	})
	v := &aliasView{
		list:  make([]map[string]any, len(entries)),
		index: make([]hashTrie[[]map[string]any], len(st.exprs)),
	}
	byName := v.byName.edit()
	index := make([]map[string][]map[string]any, len(st.exprs))
	for k := range index {
		index[k] = map[string][]map[string]any{}
	}
	for i, e := range entries {
		v.list[i] = e.obj
		byName.set(e.id, e.obj)
		for k, ik := range e.indexKeys {
			index[k][ik] = append(index[k][ik], e.obj)
		}
	}
	v.byName = byName.done()
	for k, m := range index {
		ed := v.index[k].edit()
		for ik, objs := range m {
			ed.set(ik, slices.Clip(objs))
		}
		v.index[k] = ed.done()
	}
	return v
}

// deriveView returns prev with changes applied, sharing what did not
// change. ok is false when prev's list was not in order (see
// patchSorted); fallbacks counts ListBy results dropped for that reason
// (they are sorted afresh when asked for).
func deriveView(prev *aliasView, changes []entryChange) (_ *aliasView, fallbacks int, ok bool) {
	var dels, adds []rankedObj
	for _, c := range changes {
		if c.old != nil {
			dels = append(dels, rankedObj{rank: c.old.rank(), obj: c.old.obj})
		}
		if c.new != nil {
			adds = append(adds, rankedObj{rank: c.new.rank(), obj: c.new.obj})
		}
	}
	list, ok := patchSorted(prev.list, listRank, dels, adds)
	if !ok {
		return nil, 0, false
	}
	v := &aliasView{list: list, index: make([]hashTrie[[]map[string]any], len(prev.index))}

	byName := prev.byName.edit()
	for _, c := range changes {
		if c.new != nil {
			byName.set(c.new.id, c.new.obj)
		} else {
			byName.del(c.old.id)
		}
	}
	v.byName = byName.done()

	type bucketChange struct{ dels, adds []rankedObj }
	for k := range v.index {
		buckets := map[string]*bucketChange{}
		bucket := func(ik string) *bucketChange {
			b := buckets[ik]
			if b == nil {
				b = &bucketChange{}
				buckets[ik] = b
			}
			return b
		}
		for _, c := range changes {
			if c.old != nil {
				b := bucket(c.old.indexKeys[k])
				b.dels = append(b.dels, rankedObj{rank: c.old.rank(), obj: c.old.obj})
			}
			if c.new != nil {
				b := bucket(c.new.indexKeys[k])
				b.adds = append(b.adds, rankedObj{rank: c.new.rank(), obj: c.new.obj})
			}
		}
		ed := prev.index[k].edit()
		for ik, b := range buckets {
			old, _ := prev.index[k].get(ik)
			objs, ok := patchSorted(old, listRank, b.dels, b.adds)
			if !ok {
				return nil, 0, false
			}
			if len(objs) == 0 {
				ed.del(ik)
			} else {
				ed.set(ik, objs)
			}
		}
		v.index[k] = ed.done()
	}

	for src, sl := range prev.sorted.all() {
		if sl.idle >= maxIdleViews {
			continue
		}
		rankOf := func(o map[string]any) objRank { return exprRank(sl.expr, o) }
		dels, adds := dels[:0], adds[:0]
		for _, c := range changes {
			if c.old != nil {
				dels = append(dels, rankedObj{rank: rankOf(c.old.obj), obj: c.old.obj})
			}
			if c.new != nil {
				adds = append(adds, rankedObj{rank: rankOf(c.new.obj), obj: c.new.obj})
			}
		}
		objs, ok := patchSorted(sl.objs, rankOf, dels, adds)
		if !ok {
			fallbacks++
			continue
		}
		v.sorted.put(src, sortedList{expr: sl.expr, objs: objs, idle: sl.idle + 1})
	}
	return v, fallbacks, true
}
