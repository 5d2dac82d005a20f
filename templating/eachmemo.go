package templating

import (
	"encoding/binary"
	"math"
	"reflect"
	"sort"
	"strings"
	"sync"
	"unsafe"

	"github.com/cespare/xxhash/v2"
	"github.com/haptic-io/haptic/store"
)

// A renderEach item's output and recorded effects depend only on the item,
// the cacheGet values it read and the engine's templates (renderEach
// snippets cannot reach the author API that writes shared state, and the
// engine offers no clock, randomness or environment). So an [Engine]
// remembers each item's result from one render to the next and replays it
// while the item is the very same object (objects are immutable once in a
// store; a change replaces the object) and every cacheGet value it read
// has the same content. A render after one object changed executes that
// object's item alone.
//
// A snippet can reach the store only through a cacheGet value holding
// .resources; such a value is not plain data, so its fingerprint is unique
// to the call and the items that read it never replay. Items that are not
// maps (strings, numbers) and maps built during the render never hit
// either; they cost one lookup. Templates must treat store objects and
// the values they pass to claim as read-only: a replayed item hands out
// the same values again.

// eachResult is one item's output and effects, and what it read. The
// engine keeps each renderEach call's results in list order (segment.go).
type eachResult struct {
	item map[string]any // keeps item alive, so its address is not reused
	key  unsafe.Pointer // item's address
	out  string
	ops  []memoOp
	deps []cacheDep
	// static are the problems its ops cause whatever other items do.
	static []Problem
	// failed is the problem of an item whose execution failed: it has no
	// output, effects or key, and is never replayed.
	failed *Problem
	// ord orders the results of its segment's list (segment.go): it
	// increases along the list and stays while the result does.
	ord uint64
}

// memoOp is a fragOp with the map named rather than pointed at (map
// states belong to one render).
type memoOp struct {
	fragOp
	mapName string
	// invalid and invalidReason are a map entry's entryProblem.
	invalid, invalidReason string
}

// cacheDep is a cacheGet key an item read and the content it had.
type cacheDep struct {
	key string
	fp  uint64
}

// servicesDelta is what changed in the Services and EndpointSlices between
// the store the memo's render read and this render's; ok is false when
// that is not known (then every backend is checked against the store).
type servicesDelta struct {
	ok            bool
	services, eps store.ChangeSet
	// pairs are the Services (namespace NUL name) either set names, the
	// EndpointSlices' by their index key's first two parts.
	pairs map[string]struct{}
}

// servicesDelta computes the render's delta once.
func (r *renderState) servicesDelta() *servicesDelta {
	if r.delta != nil {
		return r.delta
	}
	d := &servicesDelta{}
	cur, ok := r.store.(ChangeTracker)
	if prev := r.prevMarks; ok && prev != nil && r.e.sliceIndexed {
		var okS, okE bool
		d.services, okS = cur.ChangesSince(r.e.serviceAlias, prev.services)
		d.eps, okE = cur.ChangesSince(r.e.sliceAlias, prev.slices)
		d.ok = okS && okE
		d.pairs = make(map[string]struct{}, len(d.services.IDs)+len(d.eps.Keys))
		for _, set := range []map[string]bool{d.services.IDs, d.eps.Keys} {
			for k := range set {
				// k is namespace NUL name (NUL more, for longer index keys).
				ns, rest, _ := strings.Cut(k, "\x00")
				name, _, _ := strings.Cut(rest, "\x00")
				d.pairs[ns+"\x00"+name] = struct{}{}
			}
		}
	}
	r.delta = d
	return d
}

// unchanged reports whether the Service ns/svc and the EndpointSlices
// indexed under it are known to be the objects of the memo's render.
func (d *servicesDelta) unchanged(ns, svc string) bool {
	if !d.ok {
		return false
	}
	var b [128]byte
	k := append(append(append(b[:0], ns...), 0), svc...)
	_, changed := d.pairs[string(k)]
	return !changed
}

// itemPointer returns the identity of item, or nil when item cannot hit
// (it is not a non-nil map).
func itemPointer(item any) unsafe.Pointer {
	m, ok := item.(map[string]any)
	if !ok || m == nil {
		return nil
	}
	return reflect.ValueOf(m).UnsafePointer()
}

// prevMatcher finds an item among the items of the same call in the
// previous render, walking both lists in step: items keep their relative
// order, so a render after a few changes finds nearly every item at the
// next position. Anything else costs one index of the old list. The
// positions it returns only increase.
type prevMatcher struct {
	prev  []unsafe.Pointer // the previous items' identities
	j     int
	index map[unsafe.Pointer]int // built on the first item out of step
}

// find returns the previous position of the item key (next is the item
// after it, nil when none or not a map), or -1.
func (m *prevMatcher) find(key, next unsafe.Pointer) int {
	if m.j < len(m.prev) {
		if m.prev[m.j] == key {
			m.j++
			return m.j - 1
		}
		if next != nil {
			if m.prev[m.j] == next {
				return -1 // a new item before the next old one
			}
			if m.j+1 < len(m.prev) && m.prev[m.j+1] == next {
				m.j++
				return -1 // a new item in place of an old one
			}
		}
	}
	if len(m.prev) == 0 {
		return -1
	}
	if m.index == nil {
		m.index = make(map[unsafe.Pointer]int, len(m.prev))
		for i, p := range m.prev {
			if p != nil {
				m.index[p] = i
			}
		}
	}
	i, ok := m.index[key]
	if !ok || i < m.j {
		return -1 // new, or out of order: execute it again
	}
	m.j = i + 1
	return i
}

// cachePrints fingerprints the render cache's values during one renderEach
// call (the cache does not change during the call). Safe for concurrent
// use by the call's workers.
type cachePrints struct {
	r    *renderState
	mu   sync.Mutex
	fps  map[string]uint64
	salt uint64 // makes fingerprints of non-data values unique to the call
	// The classification of the call's items (one goroutine, before the
	// workers start) remembers the last key it fingerprinted and the last
	// map it found registered.
	lastKey, lastMap string
	lastFP           uint64
}

func (p *cachePrints) get(key string) uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	if fp, ok := p.fps[key]; ok {
		return fp
	}
	h := xxhash.New()
	if !fingerprint(h, p.r.cache[key]) {
		// A pointer, function or store accessor: its content cannot be
		// compared across renders, so no earlier result matches it.
		h.Reset()
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], p.salt)
		_, _ = h.Write(b[:])
		_, _ = h.WriteString(key)
	}
	fp := h.Sum64()
	if p.fps == nil {
		p.fps = map[string]uint64{}
	}
	p.fps[key] = fp
	return fp
}

// fingerprint writes an unambiguous encoding of v to h and reports whether
// v is plain data (nil, bool, numbers, strings, and maps and slices of
// them).
func fingerprint(h *xxhash.Digest, v any) bool {
	var b [9]byte
	num := func(tag byte, u uint64) {
		b[0] = tag
		binary.LittleEndian.PutUint64(b[1:], u)
		_, _ = h.Write(b[:])
	}
	str := func(tag byte, s string) {
		num(tag, uint64(len(s)))
		_, _ = h.WriteString(s)
	}
	switch x := v.(type) {
	case nil:
		num('0', 0)
	case bool:
		if x {
			num('b', 1)
		} else {
			num('b', 0)
		}
	case string:
		str('s', x)
	case int:
		num('i', uint64(x))
	case int64:
		num('I', uint64(x))
	case int32:
		num('j', uint64(x))
	case uint64:
		num('u', x)
	case float64:
		num('f', math.Float64bits(x))
	case []string:
		num('L', uint64(len(x)))
		for _, s := range x {
			str('s', s)
		}
	case []any:
		num('l', uint64(len(x)))
		for _, e := range x {
			if !fingerprint(h, e) {
				return false
			}
		}
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		num('m', uint64(len(keys)))
		for _, k := range keys {
			str('k', k)
			if !fingerprint(h, x[k]) {
				return false
			}
		}
	default:
		return false
	}
	return true
}
