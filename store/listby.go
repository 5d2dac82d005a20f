package store

import (
	"cmp"
	"maps"
	"slices"
	"sync"
)

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
// shared by every snapshot until the alias changes). The next view derives
// its results from these (see deriveView), so an expression asked for is
// kept up to date, until it goes unasked for maxIdleViews views in a row.
type sortedCache struct {
	mu sync.Mutex
	m  map[string]sortedList
}

type sortedList struct {
	expr IndexExpr
	objs []map[string]any
	// idle counts the views in a row, up to this one, that derived this
	// result without being asked for it.
	idle int
}

// maxIdleViews is how many views in a row may derive a ListBy result that
// nobody asks for before the next view drops it (a template that no longer
// uses the expression, after a reload).
const maxIdleViews = 16

func (c *sortedCache) get(src string) ([]map[string]any, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	l, ok := c.m[src]
	if ok && l.idle != 0 {
		l.idle = 0
		c.m[src] = l
	}
	return l.objs, ok
}

// put stores l unless a result for src is there already; it returns the
// stored result.
func (c *sortedCache) put(src string, l sortedList) []map[string]any {
	c.mu.Lock()
	defer c.mu.Unlock()
	if have, ok := c.m[src]; ok {
		return have.objs
	}
	if c.m == nil {
		c.m = map[string]sortedList{}
	}
	c.m[src] = l
	return l.objs
}

// all returns a copy of the cached results.
func (c *sortedCache) all() map[string]sortedList {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.m)
}

// ListBy returns the objects of alias sorted as [SortObjects] orders them by
// expr (templating.SortedStore). The first call per alias and
// expression sorts; later ones return the same slice until the alias
// changes, and after a change a result derived from the previous one (the
// changed objects spliced in), never sorting again. Callers must not
// modify the result.
func (s *Snapshot) ListBy(alias string, expr IndexExpr) []map[string]any {
	v := s.views[alias]
	if v == nil {
		return nil
	}
	if l, ok := v.sorted.get(expr.src); ok {
		return l
	}
	return v.sorted.put(expr.src, sortedList{expr: expr, objs: SortObjects(v.list, expr)})
}

// ListBy returns [Snapshot.ListBy] of the current snapshot.
func (s *Memory) ListBy(alias string, expr IndexExpr) []map[string]any {
	return s.Snapshot().ListBy(alias, expr)
}
