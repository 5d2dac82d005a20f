package templating

import (
	"fmt"

	"github.com/haptic-io/haptic/store"
)

// Store is what a render reads: unstructured objects (JSON-shaped
// map[string]any) per watched-resource alias. Implementations must return
// objects in a deterministic order and must not change what they return
// during one render; [store.Memory.Snapshot] gives such a view. Renders only
// read the objects; callers must not mutate objects after handing them to a
// store.
type Store interface {
	// List returns every object of the alias, sorted by namespace, then name.
	List(alias string) []map[string]any
	// Get returns the object with that namespace and name.
	Get(alias, namespace, name string) (map[string]any, bool)
	// Fetch returns the objects whose indexBy values equal keys, sorted like
	// List. Fewer keys than indexBy expressions match by prefix; no keys
	// returns List.
	Fetch(alias string, keys ...string) []map[string]any
}

// SortedStore is an optional [Store] method: the objects of an alias
// sorted by an index expression, as [store.SortObjects] orders them. A
// store that keeps the result across renders (as [store.Snapshot] does)
// makes .resources.<alias>.ListBy free after the first render; without it
// the render sorts List once per render and expression.
type SortedStore interface {
	ListBy(alias string, expr store.IndexExpr) []map[string]any
}

// ChangeTracker is an optional [Store] method set, the way [net/http.Flusher]
// is optional for a ResponseWriter: it says what changed in an alias since
// an earlier position of the same store. With it, a render after a few
// changes re-checks only the backends whose Services or EndpointSlices
// changed; without it, every backend is checked against the store.
// [store.Snapshot] implements it.
type ChangeTracker interface {
	// Mark returns the current position of alias.
	Mark(alias string) store.Mark
	// ChangesSince returns what changed in alias since m; ok is false when
	// that is not known.
	ChangesSince(alias string, m store.Mark) (cs store.ChangeSet, ok bool)
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
	e, err := store.ParseIndexExpr(expr)
	if err != nil {
		return nil, fmt.Errorf("ListBy: %w", err)
	}
	var l []map[string]any
	if sl, ok := x.store.(SortedStore); ok {
		l = sl.ListBy(x.alias, e)
	} else {
		l = store.SortObjects(x.store.List(x.alias), e)
	}
	if x.sorted == nil {
		x.sorted = map[string][]map[string]any{}
	}
	x.sorted[expr] = l
	return l, nil
}

var (
	_ Store         = (*store.Memory)(nil)
	_ Store         = (*store.Snapshot)(nil)
	_ SortedStore   = (*store.Snapshot)(nil)
	_ SortedStore   = (*store.Memory)(nil)
	_ ChangeTracker = (*store.Snapshot)(nil)
)
