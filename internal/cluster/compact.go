package cluster

import (
	"math"
	"slices"
	"strconv"
	"sync"
)

// compactor makes the objects the informers cache share what they hold in
// common. A decoded object holds its own copy of every map key and string
// and its own maps, and the smallest Go map takes about 300 bytes, so most
// of an EndpointSlice or a Service is maps and strings that thousands of
// other objects hold equal: a port list, an endpoint's conditions, an
// empty status, "TCP". compact replaces each such value by one canonical
// instance; the objects read exactly as before.
//
// Shared values are read-only, as every cached object is: a change made
// through one object would show in all that share the value.
//
// A canonical value is kept once it is seen a second time, in a table of
// bounded size (see [sharedTable]): values only one object holds (a uid,
// a pod IP) cost the table little, and the table forgets values no object
// holds any more.
type compactor struct {
	mu      sync.Mutex
	strings sharedTable // boxed strings by content
	trees   sharedTable // maps and lists by canonical encoding
	buf     []byte      // guarded by mu; the canonical encodings in progress
	keys    []string    // guarded by mu; the sorted keys of the maps in progress
}

// Bounds of what compact shares. Longer strings and larger subtrees rarely
// repeat, and a table entry costs about what it saves.
const (
	maxSharedString = 64
	maxSharedTree   = 256
)

func newCompactor() *compactor {
	return &compactor{strings: newSharedTable(1 << 15), trees: newSharedTable(1 << 14)}
}

// compact replaces the values of obj it holds equal to values of objects
// compacted before by their canonical instances, and returns obj. obj and
// its metadata map are never shared: they identify the object.
func (c *compactor) compact(obj map[string]any) map[string]any {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.buf = c.buf[:0]
	c.members(obj, true)
	clear(c.keys[:cap(c.keys)]) // the keys are not kept alive
	c.keys = c.keys[:0]
	if cap(c.buf) > 1<<16 {
		c.buf = nil // a large object's buffer is not kept
	}
	return obj
}

// members compacts the values of m, an object's top level (top) or its
// metadata: each value is shared on its own, m itself never is.
func (c *compactor) members(m map[string]any, top bool) {
	from := c.pushKeys(m)
	for _, k := range c.keys[from:] {
		v := m[k]
		if md, ok := v.(map[string]any); ok && top && k == "metadata" {
			c.members(md, false)
		} else {
			v = c.value(v)
		}
		m[c.key(k)] = v // also replaces the key: string keys are updated on assignment
		c.buf = c.buf[:0]
	}
	c.keys = c.keys[:from]
}

// pushKeys appends m's keys, sorted, to c.keys and returns where they
// start; the caller truncates c.keys back to it when done with them.
func (c *compactor) pushKeys(m map[string]any) int {
	from := len(c.keys)
	for k := range m {
		c.keys = append(c.keys, k)
	}
	slices.Sort(c.keys[from:])
	return from
}

// key returns the canonical instance of the map key k.
func (c *compactor) key(k string) string {
	if len(k) > maxSharedString {
		return k
	}
	return c.strings.canonical(k, k).(string)
}

// value appends the canonical encoding of v to c.buf and returns v's
// canonical instance, its maps and lists compacted in place. A subtree
// whose encoding is longer than maxSharedTree is not shared; its encoding
// is then cut from c.buf and an unshareable mark (0xff, which no encoding
// holds) makes its ancestors unshareable too.
func (c *compactor) value(v any) any {
	switch x := v.(type) {
	case string:
		c.buf = strconv.AppendQuote(c.buf, x)
		if len(x) > maxSharedString {
			return v
		}
		return c.strings.canonical(x, v)
	case bool:
		c.buf = strconv.AppendBool(c.buf, x)
	case int64:
		c.buf = strconv.AppendInt(append(c.buf, 'i'), x, 10)
	case float64:
		c.buf = strconv.AppendUint(append(c.buf, 'f'), math.Float64bits(x), 16)
	case nil:
		c.buf = append(c.buf, 'n')
	case []any:
		start := len(c.buf)
		c.buf = append(c.buf, '[')
		for i, e := range x {
			x[i] = c.value(e)
			c.buf = append(c.buf, ',')
		}
		c.buf = append(c.buf, ']')
		return c.tree(start, v)
	case map[string]any:
		start := len(c.buf)
		c.buf = append(c.buf, '{')
		from := c.pushKeys(x)
		for i := from; i < len(c.keys); i++ { // c.keys grows in the loop
			k := c.keys[i]
			c.buf = append(strconv.AppendQuote(c.buf, k), ':')
			x[c.key(k)] = c.value(x[k])
			c.buf = append(c.buf, ',')
		}
		c.keys = c.keys[:from]
		c.buf = append(c.buf, '}')
		return c.tree(start, v)
	default:
		c.buf = append(c.buf, unshareable) // a type no decoded object holds
	}
	return v
}

const unshareable = 0xff

// tree returns the canonical instance of the list or map v whose
// encoding starts at c.buf[start].
func (c *compactor) tree(start int, v any) any {
	enc := c.buf[start:]
	if len(enc) > maxSharedTree || slices.Contains(enc, unshareable) {
		c.buf = append(c.buf[:start], unshareable)
		return v
	}
	return c.trees.canonicalBytes(enc, v)
}

// sharedTable holds canonical values by key in two generations: a value
// seen once waits in cold, which is cleared when full, and one seen again
// moves to hot, which is cleared when full; either way the values stay
// where objects hold them and only later objects stop sharing them.
type sharedTable struct {
	hot, cold map[string]any
	max       int
}

func newSharedTable(max int) sharedTable {
	return sharedTable{hot: map[string]any{}, cold: map[string]any{}, max: max}
}

func (t *sharedTable) canonical(key string, v any) any {
	if c, ok := t.hot[key]; ok {
		return c
	}
	if c, ok := t.cold[key]; ok {
		delete(t.cold, key)
		if len(t.hot) >= t.max {
			clear(t.hot)
		}
		t.hot[key] = c
		return c
	}
	if len(t.cold) >= t.max {
		clear(t.cold)
	}
	t.cold[key] = v
	return v
}

// canonicalBytes is canonical with the key as bytes: a key found costs no
// allocation.
func (t *sharedTable) canonicalBytes(key []byte, v any) any {
	if c, ok := t.hot[string(key)]; ok {
		return c
	}
	return t.canonical(string(key), v)
}
