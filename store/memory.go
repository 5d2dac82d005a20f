package store

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
)

// ErrUnknownAlias is returned when an object is added under an alias the
// store was not configured with.
var ErrUnknownAlias = errors.New("store: unknown watched-resource alias")

// Memory is an in-memory object store with the indexes its watched
// resources declare. It is built to be fed by Kubernetes informers: Add,
// Update and Delete are cheap (no index work happens until the next
// snapshot), and [Memory.Snapshot] returns an immutable view that a
// render reads without locks while updates continue.
//
// Concurrency: all methods are safe for concurrent use. Snapshots are
// immutable and shared; taking one costs nothing when nothing changed and
// otherwise derives the views of the aliases that changed from their
// previous ones: O(k log n) for k changes to an alias of n objects, plus
// copying the sorted slices the changes touch (List, the Fetch results
// the changed objects leave or join, and the ListBy results asked for).
type Memory struct {
	resources map[string]WatchedResource // immutable

	mu      sync.Mutex
	aliases map[string]*aliasState // guarded by mu
	snap    *Snapshot              // guarded by mu; nil after a change
	gen     uint64                 // guarded by mu; counts changes
	stats   viewStats              // guarded by mu
}

// viewStats counts how alias views came about, for tests.
type viewStats struct {
	built, derived int
	// fallbacks counts views and ListBy results that had to be sorted
	// afresh because a stored object changed after it was stored.
	fallbacks int
}

type aliasState struct {
	exprs []IndexExpr
	objs  map[string]*storeEntry // by namespace NUL name
	// view is the last view built (nil before the first snapshot); pending
	// holds, for each object changed since, the entry view holds (nil if
	// none).
	view    *aliasView
	pending map[string]*storeEntry
	// log records the changes between views derived one from another
	// (changelog.go).
	log *changeLog
}

// storeEntry is an object as stored: immutable.
type storeEntry struct {
	obj       map[string]any
	id        string // namespace NUL name
	namespace string
	name      string
	rv        string
	indexKeys []string // indexKeys[k-1]: the first k indexBy values joined by NUL
}

func (e *storeEntry) rank() objRank { return objRank{ns: e.namespace, name: e.name} }

// newEntry evaluates obj's indexBy values.
func (st *aliasState) newEntry(alias string, obj map[string]any) (*storeEntry, error) {
	ns, name, rv := ObjectMeta(obj)
	if name == "" {
		return nil, fmt.Errorf("store %s: object without metadata.name", alias)
	}
	e := &storeEntry{obj: obj, id: ns + "\x00" + name, namespace: ns, name: name, rv: rv}
	if len(st.exprs) > 0 {
		e.indexKeys = make([]string, len(st.exprs))
		var sb strings.Builder
		for k, x := range st.exprs {
			v, _ := x.Eval(obj)
			if k > 0 {
				sb.WriteByte(0)
			}
			sb.WriteString(v)
			e.indexKeys[k] = sb.String()
		}
	}
	return e, nil
}

// put stores e unless an entry with the same non-empty resourceVersion is
// there; it reports whether the alias changed.
func (st *aliasState) put(e *storeEntry) bool {
	old, ok := st.objs[e.id]
	if ok && e.rv != "" && old.rv == e.rv {
		return false
	}
	st.noteChange(e.id, old)
	st.objs[e.id] = e
	return true
}

// remove deletes the object with id; it reports whether there was one.
func (st *aliasState) remove(id string) bool {
	old, ok := st.objs[id]
	if !ok {
		return false
	}
	st.noteChange(id, old)
	delete(st.objs, id)
	return true
}

// noteChange records that id, whose entry is old, is about to change.
func (st *aliasState) noteChange(id string, old *storeEntry) {
	if st.view == nil {
		return // the next snapshot builds the view afresh
	}
	if st.pending == nil {
		st.pending = map[string]*storeEntry{}
	}
	if _, seen := st.pending[id]; !seen {
		st.pending[id] = old
	}
}

// changes returns what changed since st.view and forgets it.
func (st *aliasState) changes() []entryChange {
	var out []entryChange
	for id, old := range st.pending {
		if cur := st.objs[id]; cur != old {
			out = append(out, entryChange{old: old, new: cur})
		}
	}
	if len(st.pending) > 64 {
		st.pending = nil
	} else {
		clear(st.pending)
	}
	return out
}

// NewMemory returns an empty store for the given watched resources.
// indexBy expressions that do not parse are an error.
func NewMemory(resources map[string]WatchedResource) (*Memory, error) {
	s := &Memory{resources: resources, aliases: make(map[string]*aliasState, len(resources))}
	for alias, wr := range resources {
		st := &aliasState{objs: map[string]*storeEntry{}}
		for _, src := range wr.IndexBy {
			e, err := ParseIndexExpr(src)
			if err != nil {
				return nil, fmt.Errorf("new store: alias %q: %w", alias, err)
			}
			st.exprs = append(st.exprs, e)
		}
		s.aliases[alias] = st
	}
	return s, nil
}

// AddObjects files each object under every alias whose apiVersion equals
// the object's and whose resource is [ResourceForKind] of its kind (objects
// no alias watches are skipped), as [LoadDir] does. It returns how many
// objects were filed.
func (s *Memory) AddObjects(objs ...map[string]any) (int, error) {
	aliases := slices.Sorted(maps.Keys(s.resources))
	filed := 0
	for _, obj := range objs {
		apiVersion, _ := obj["apiVersion"].(string)
		resource := ResourceForKind(stringField(obj, "kind"))
		matched := false
		for _, alias := range aliases {
			wr := s.resources[alias]
			if wr.APIVersion != apiVersion || wr.Resource != resource {
				continue
			}
			if err := s.Update(alias, obj); err != nil {
				return filed, err
			}
			matched = true
		}
		if matched {
			filed++
		}
	}
	return filed, nil
}

func stringField(obj map[string]any, key string) string {
	s, _ := obj[key].(string)
	return s
}

// Add inserts or replaces obj under alias. Add and Update behave the same,
// so informer handlers may call either.
func (s *Memory) Add(alias string, obj map[string]any) error {
	return s.Update(alias, obj)
}

// Update inserts or replaces obj under alias. An object whose
// metadata.resourceVersion is non-empty and equal to the stored one is
// taken as unchanged (informer resyncs cost nothing).
func (s *Memory) Update(alias string, obj map[string]any) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.aliases[alias]
	if !ok {
		ns, name, _ := ObjectMeta(obj)
		return fmt.Errorf("store %s %s/%s: %w", alias, ns, name, ErrUnknownAlias)
	}
	e, err := st.newEntry(alias, obj)
	if err != nil {
		return err
	}
	if st.put(e) {
		s.changedLocked()
	}
	return nil
}

// Delete removes the object; deleting a missing object is not an error.
func (s *Memory) Delete(alias, namespace, name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.aliases[alias]
	if !ok {
		return fmt.Errorf("store %s %s/%s: %w", alias, namespace, name, ErrUnknownAlias)
	}
	if st.remove(namespace + "\x00" + name) {
		s.changedLocked()
	}
	return nil
}

// Replace sets the alias's objects to objs (an informer relist), at once:
// no snapshot sees part of it. As with Update, an object whose non-empty
// resourceVersion equals the stored one's keeps the stored object, so a
// relist that brings nothing new changes nothing. An object without a name
// is an error, and then nothing changes.
func (s *Memory) Replace(alias string, objs []map[string]any) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.aliases[alias]
	if !ok {
		return fmt.Errorf("store %s: %w", alias, ErrUnknownAlias)
	}
	entries := make([]*storeEntry, len(objs))
	for i, o := range objs {
		e, err := st.newEntry(alias, o)
		if err != nil {
			return err
		}
		entries[i] = e
	}
	keep := make(map[string]struct{}, len(entries))
	for _, e := range entries {
		keep[e.id] = struct{}{}
		if st.put(e) {
			s.changedLocked()
		}
	}
	for id := range st.objs {
		if _, ok := keep[id]; !ok && st.remove(id) {
			s.changedLocked()
		}
	}
	return nil
}

// Generation counts the changes the store has seen; it only grows.
func (s *Memory) Generation() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gen
}

func (s *Memory) changedLocked() {
	s.snap = nil
	s.gen++
}

// Snapshot returns an immutable, consistent view of the store. Render from
// a snapshot when the store is fed concurrently.
func (s *Memory) Snapshot() *Snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.snap != nil {
		return s.snap
	}
	snap := &Snapshot{views: make(map[string]*aliasView, len(s.aliases))}
	for alias, st := range s.aliases {
		snap.views[alias] = s.viewLocked(st)
	}
	s.snap = snap
	return snap
}

// A view is built afresh rather than derived from the previous one when
// more than rebuildMin objects and more than 1/rebuildShare of the alias
// changed since (an informer relist): deriving costs O(k log n) for k
// changes, building O(n log n), and the rebuilt view sorts its ListBy
// results again when asked.
const (
	rebuildMin   = 64
	rebuildShare = 2
)

// viewLocked returns st's view as of now, deriving it from the previous
// one when few objects changed.
func (s *Memory) viewLocked(st *aliasState) *aliasView {
	if st.view == nil {
		st.view = st.newLog(buildView(st))
		s.stats.built++
		return st.view
	}
	changes := st.changes()
	switch {
	case len(changes) == 0:
	case len(changes) > rebuildMin && len(changes)*rebuildShare > len(st.objs):
		st.view = st.newLog(buildView(st))
		s.stats.built++
	default:
		v, fallbacks, ok := deriveView(st.view, changes)
		if ok {
			s.stats.derived++
			v.log, v.logged = st.record(changes)
		} else {
			v = st.newLog(buildView(st))
			s.stats.built++
			fallbacks++
		}
		s.stats.fallbacks += fallbacks
		st.view = v
	}
	return st.view
}

// List returns [Snapshot.List] of the current snapshot.
func (s *Memory) List(alias string) []map[string]any { return s.Snapshot().List(alias) }

// Get returns [Snapshot.Get] of the current snapshot.
func (s *Memory) Get(alias, namespace, name string) (map[string]any, bool) {
	return s.Snapshot().Get(alias, namespace, name)
}

// Fetch returns [Snapshot.Fetch] of the current snapshot.
func (s *Memory) Fetch(alias string, keys ...string) []map[string]any {
	return s.Snapshot().Fetch(alias, keys...)
}

// Snapshot is an immutable view of a [Memory]; it is safe for
// concurrent use.
type Snapshot struct {
	views map[string]*aliasView
}

// List returns every object of the alias, sorted by namespace, then name.
func (s *Snapshot) List(alias string) []map[string]any {
	if v := s.views[alias]; v != nil {
		return v.list
	}
	return nil
}

// Get returns the object with that namespace and name.
func (s *Snapshot) Get(alias, namespace, name string) (map[string]any, bool) {
	if v := s.views[alias]; v != nil {
		var kb [128]byte
		k := append(append(append(kb[:0], namespace...), 0), name...)
		return v.byName.getBytes(k) // no allocation for the lookup key
	}
	return nil, false
}

// Fetch returns the objects whose indexBy values equal keys, sorted like
// List. Fewer keys than indexBy expressions match by prefix; no keys
// returns List.
func (s *Snapshot) Fetch(alias string, keys ...string) []map[string]any {
	v := s.views[alias]
	if v == nil {
		return nil
	}
	if len(keys) == 0 {
		return v.list
	}
	if len(keys) > len(v.index) {
		return nil
	}
	if len(keys) == 1 {
		l, _ := v.index[0].get(keys[0])
		return l
	}
	var kb [128]byte
	k := kb[:0]
	for i, key := range keys {
		if i > 0 {
			k = append(k, 0)
		}
		k = append(k, key...)
	}
	l, _ := v.index[len(keys)-1].getBytes(k) // no allocation for the lookup key
	return l
}

// ObjectMeta returns metadata.namespace, .name and .resourceVersion.
func ObjectMeta(obj map[string]any) (ns, name, rv string) {
	md, _ := obj["metadata"].(map[string]any)
	ns, _ = md["namespace"].(string)
	name, _ = md["name"].(string)
	rv, _ = md["resourceVersion"].(string)
	return ns, name, rv
}
