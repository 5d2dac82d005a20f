package templating

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
)

// Store is what a render reads: unstructured objects (JSON-shaped
// map[string]any) per watched-resource alias. Implementations must return
// objects in a deterministic order and must not change what they return
// during one render; [*MemoryStore.Snapshot] gives such a view. Renders only
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

// ErrUnknownAlias is returned when an object is added under an alias the
// store was not configured with.
var ErrUnknownAlias = errors.New("templating: unknown watched-resource alias")

// MemoryStore is an in-memory [Store] with the indexes its watched
// resources declare. It is built to be fed by Kubernetes informers: Add,
// Update and Delete are cheap (no index work happens until the next
// snapshot), and [MemoryStore.Snapshot] returns an immutable view that a
// render reads without locks while updates continue.
//
// Concurrency: all methods are safe for concurrent use. Snapshots are
// immutable and shared; taking one costs nothing when nothing changed and
// otherwise rebuilds the views of the aliases that changed (O(n log n) in
// that alias's objects).
type MemoryStore struct {
	resources map[string]WatchedResource // immutable

	mu      sync.Mutex
	aliases map[string]*aliasState // guarded by mu
	snap    *Snapshot              // guarded by mu; nil after a change
	gen     uint64                 // guarded by mu; counts changes
}

type aliasState struct {
	exprs []IndexExpr
	objs  map[string]*storeEntry // by namespace "\x00" name
	view  *aliasView             // nil after a change
}

type storeEntry struct {
	obj       map[string]any
	namespace string
	name      string
	rv        string
	keys      []string // indexBy values
}

// NewMemoryStore returns an empty store for the given watched resources.
// indexBy expressions that do not parse are an error.
func NewMemoryStore(resources map[string]WatchedResource) (*MemoryStore, error) {
	s := &MemoryStore{resources: resources, aliases: make(map[string]*aliasState, len(resources))}
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
func (s *MemoryStore) AddObjects(objs ...map[string]any) (int, error) {
	aliases := sortedKeys(s.resources)
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
func (s *MemoryStore) Add(alias string, obj map[string]any) error {
	return s.Update(alias, obj)
}

// Update inserts or replaces obj under alias. An object whose
// metadata.resourceVersion is non-empty and equal to the stored one is
// taken as unchanged (informer resyncs cost nothing).
func (s *MemoryStore) Update(alias string, obj map[string]any) error {
	ns, name, rv := objectMeta(obj)
	if name == "" {
		return fmt.Errorf("store %s: object without metadata.name", alias)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.aliases[alias]
	if !ok {
		return fmt.Errorf("store %s %s/%s: %w", alias, ns, name, ErrUnknownAlias)
	}
	k := ns + "\x00" + name
	if old, ok := st.objs[k]; ok && rv != "" && old.rv == rv {
		return nil
	}
	e := &storeEntry{obj: obj, namespace: ns, name: name, rv: rv, keys: make([]string, len(st.exprs))}
	for i, x := range st.exprs {
		e.keys[i], _ = x.Eval(obj)
	}
	st.objs[k] = e
	s.changedLocked(st)
	return nil
}

// Delete removes the object; deleting a missing object is not an error.
func (s *MemoryStore) Delete(alias, namespace, name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.aliases[alias]
	if !ok {
		return fmt.Errorf("store %s %s/%s: %w", alias, namespace, name, ErrUnknownAlias)
	}
	k := namespace + "\x00" + name
	if _, ok := st.objs[k]; ok {
		delete(st.objs, k)
		s.changedLocked(st)
	}
	return nil
}

// Replace sets the alias's objects to objs (an informer relist).
func (s *MemoryStore) Replace(alias string, objs []map[string]any) error {
	s.mu.Lock()
	st, ok := s.aliases[alias]
	if ok {
		st.objs = make(map[string]*storeEntry, len(objs))
		s.changedLocked(st)
	}
	s.mu.Unlock()
	if !ok {
		return fmt.Errorf("store %s: %w", alias, ErrUnknownAlias)
	}
	for _, o := range objs {
		if err := s.Update(alias, o); err != nil {
			return err
		}
	}
	return nil
}

// Generation counts the changes the store has seen; it only grows.
func (s *MemoryStore) Generation() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gen
}

func (s *MemoryStore) changedLocked(st *aliasState) {
	st.view = nil
	s.snap = nil
	s.gen++
}

// Snapshot returns an immutable, consistent view of the store. Render from
// a snapshot when the store is fed concurrently.
func (s *MemoryStore) Snapshot() *Snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.snap != nil {
		return s.snap
	}
	snap := &Snapshot{views: make(map[string]*aliasView, len(s.aliases))}
	for alias, st := range s.aliases {
		if st.view == nil {
			st.view = buildView(st)
		}
		snap.views[alias] = st.view
	}
	s.snap = snap
	return snap
}

// List implements [Store] on the current snapshot.
func (s *MemoryStore) List(alias string) []map[string]any { return s.Snapshot().List(alias) }

// Get implements [Store] on the current snapshot.
func (s *MemoryStore) Get(alias, namespace, name string) (map[string]any, bool) {
	return s.Snapshot().Get(alias, namespace, name)
}

// Fetch implements [Store] on the current snapshot.
func (s *MemoryStore) Fetch(alias string, keys ...string) []map[string]any {
	return s.Snapshot().Fetch(alias, keys...)
}

// Snapshot is an immutable view of a [MemoryStore]; it is safe for
// concurrent use.
type Snapshot struct {
	views map[string]*aliasView
}

type aliasView struct {
	list   []map[string]any
	byName map[string]map[string]any
	// index[k-1] maps the first k indexBy values, joined by NUL, to the
	// matching objects in List order.
	index []map[string][]map[string]any
	// sorted caches ListBy results (see listby.go).
	sorted sortedCache
}

func buildView(st *aliasState) *aliasView {
	entries := make([]*storeEntry, 0, len(st.objs))
	for _, e := range st.objs {
		entries = append(entries, e)
	}
	sort.Slice(entries, func(i, j int) bool {
		if entries[i].namespace != entries[j].namespace {
			return entries[i].namespace < entries[j].namespace
		}
		return entries[i].name < entries[j].name
	})
	v := &aliasView{
		list:   make([]map[string]any, len(entries)),
		byName: make(map[string]map[string]any, len(entries)),
		index:  make([]map[string][]map[string]any, len(st.exprs)),
	}
	for k := range v.index {
		v.index[k] = map[string][]map[string]any{}
	}
	var sb strings.Builder
	for i, e := range entries {
		v.list[i] = e.obj
		v.byName[e.namespace+"\x00"+e.name] = e.obj
		sb.Reset()
		for k, key := range e.keys {
			if k > 0 {
				sb.WriteByte(0)
			}
			sb.WriteString(key)
			ik := sb.String()
			v.index[k][ik] = append(v.index[k][ik], e.obj)
		}
	}
	return v
}

// List implements [Store].
func (s *Snapshot) List(alias string) []map[string]any {
	if v := s.views[alias]; v != nil {
		return v.list
	}
	return nil
}

// Get implements [Store].
func (s *Snapshot) Get(alias, namespace, name string) (map[string]any, bool) {
	if v := s.views[alias]; v != nil {
		var kb [128]byte
		k := append(append(append(kb[:0], namespace...), 0), name...)
		o, ok := v.byName[string(k)] // no allocation for the lookup key
		return o, ok
	}
	return nil, false
}

// Fetch implements [Store].
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
		return v.index[0][keys[0]]
	}
	var kb [128]byte
	k := kb[:0]
	for i, key := range keys {
		if i > 0 {
			k = append(k, 0)
		}
		k = append(k, key...)
	}
	return v.index[len(keys)-1][string(k)] // no allocation for the lookup key
}

// objectMeta returns metadata.namespace, .name and .resourceVersion.
func objectMeta(obj map[string]any) (ns, name, rv string) {
	md, _ := obj["metadata"].(map[string]any)
	ns, _ = md["namespace"].(string)
	name, _ = md["name"].(string)
	rv, _ = md["resourceVersion"].(string)
	return ns, name, rv
}

var (
	_ Store = (*MemoryStore)(nil)
	_ Store = (*Snapshot)(nil)
)
