package templating

import (
	"cmp"
	"fmt"
	"slices"
	"sync"
)

// SortedLister is an optional [Store] method: the objects of an alias
// sorted by an index expression, as [SortObjects] orders them. A store
// that keeps the result across renders (as [*Snapshot] does) makes
// .resources.<alias>.ListBy free after the first render; without it the
// render sorts List once per render and expression.
type SortedLister interface {
	ListBy(alias string, expr IndexExpr) []map[string]any
}

// SortObjects returns objs (in List order: namespace, then name) sorted
// by the value of expr (compared as strings, see [IndexExpr.Eval]);
// objects without a scalar value there, or with an empty one, come last;
// ties keep their order.
// objs is not changed.
func SortObjects(objs []map[string]any, expr IndexExpr) []map[string]any {
	type keyed struct {
		key string
		ok  bool
		obj map[string]any
	}
	ks := make([]keyed, len(objs))
	for i, o := range objs {
		ks[i].key, ks[i].ok = expr.Eval(o)
		ks[i].ok = ks[i].ok && ks[i].key != ""
		ks[i].obj = o
	}
	slices.SortStableFunc(ks, func(a, b keyed) int {
		if a.ok != b.ok {
			if a.ok {
				return -1
			}
			return 1
		}
		return cmp.Compare(a.key, b.key)
	})
	out := make([]map[string]any, len(ks))
	for i := range ks {
		out[i] = ks[i].obj
	}
	return out
}

// sortedCache holds an alias view's ListBy results by expression source.
// Views are immutable, so a result stays valid as long as the view (it is
// shared by every snapshot until the alias changes).
type sortedCache struct {
	mu sync.Mutex
	m  map[string][]map[string]any
}

// ListBy implements [SortedLister]: the first call per alias view and
// expression sorts, later ones (in this and later snapshots, until the
// alias changes) return the same slice, which callers must not modify.
func (s *Snapshot) ListBy(alias string, expr IndexExpr) []map[string]any {
	v := s.views[alias]
	if v == nil {
		return nil
	}
	v.sorted.mu.Lock()
	defer v.sorted.mu.Unlock()
	if l, ok := v.sorted.m[expr.src]; ok {
		return l
	}
	l := SortObjects(v.list, expr)
	if v.sorted.m == nil {
		v.sorted.m = map[string][]map[string]any{}
	}
	v.sorted.m[expr.src] = l
	return l
}

// ListBy implements [SortedLister] on the current snapshot.
func (s *MemoryStore) ListBy(alias string, expr IndexExpr) []map[string]any {
	return s.Snapshot().ListBy(alias, expr)
}

// ListBy returns List sorted by the index expression expr (for example
// "metadata.creationTimestamp" for oldest first), ties in List order, and
// objects without a value (or with an empty one) last. The result is shared: do not modify it.
func (x *Resources) ListBy(expr string) ([]map[string]any, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if l, ok := x.sorted[expr]; ok {
		return l, nil
	}
	e, err := ParseIndexExpr(expr)
	if err != nil {
		return nil, fmt.Errorf("ListBy: %w", err)
	}
	var l []map[string]any
	if sl, ok := x.store.(SortedLister); ok {
		l = sl.ListBy(x.alias, e)
	} else {
		l = SortObjects(x.store.List(x.alias), e)
	}
	if x.sorted == nil {
		x.sorted = map[string][]map[string]any{}
	}
	x.sorted[expr] = l
	return l, nil
}

var (
	_ SortedLister = (*Snapshot)(nil)
	_ SortedLister = (*MemoryStore)(nil)
)
