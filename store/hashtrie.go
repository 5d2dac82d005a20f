package store

import (
	"math/bits"

	"github.com/cespare/xxhash/v2"
)

// hashTrie is an immutable map from strings to V (a hash array mapped
// trie): a snapshot's byName and index maps. Deriving the next snapshot's
// map copies only the nodes on the paths to the changed keys (a few nodes
// of at most 32 slots each), so the maps of both snapshots share the rest.
// The zero value is an empty map. Safe for concurrent readers.
type hashTrie[V any] struct {
	root *trieNode[V]
	n    int
}

const (
	trieBits = 5
	trieMask = 1<<trieBits - 1
)

// trieNode has one slot per set bit of bitmap, in bit order.
type trieNode[V any] struct {
	edit   *trieEdit[V] // the edit that may change this node in place
	bitmap uint32
	slots  []trieSlot[V]
}

// trieSlot is either a child node or a chain of leaves.
type trieSlot[V any] struct {
	node *trieNode[V]
	leaf *trieLeaf[V]
}

// trieLeaf is immutable. A chain holds the keys whose 64-bit hashes are
// all equal.
type trieLeaf[V any] struct {
	hash uint64
	key  string
	val  V
	next *trieLeaf[V]
}

// size returns the number of keys.
func (m hashTrie[V]) size() int { return m.n }

// get returns the value of key.
func (m hashTrie[V]) get(key string) (V, bool) { return m.getHashed(xxhash.Sum64String(key), key) }

// getHashed is get with key's hash h given (tests use a weak hash).
func (m hashTrie[V]) getHashed(h uint64, key string) (V, bool) {
	for l := m.chain(h); l != nil; l = l.next {
		if l.key == key {
			return l.val, true
		}
	}
	var zero V
	return zero, false
}

// getBytes is get with the key in a byte slice (no allocation).
func (m hashTrie[V]) getBytes(key []byte) (V, bool) {
	for l := m.chain(xxhash.Sum64(key)); l != nil; l = l.next {
		if l.key == string(key) {
			return l.val, true
		}
	}
	var zero V
	return zero, false
}

// chain returns the leaves whose hash is h.
func (m hashTrie[V]) chain(h uint64) *trieLeaf[V] {
	n := m.root
	for shift := uint(0); n != nil; shift += trieBits {
		bit := uint32(1) << ((h >> shift) & trieMask)
		if n.bitmap&bit == 0 {
			return nil
		}
		s := &n.slots[bits.OnesCount32(n.bitmap&(bit-1))]
		if s.node != nil {
			n = s.node
			continue
		}
		if s.leaf.hash == h {
			return s.leaf
		}
		return nil
	}
	return nil
}

// trieEdit derives a new hashTrie from an old one. Nodes it copied are its
// own and change in place, so a batch of k changes copies each touched
// node once. The old trie never changes. After done the edit must not be
// used.
type trieEdit[V any] struct {
	root *trieNode[V]
	n    int
}

// edit starts deriving a new map from m.
func (m hashTrie[V]) edit() *trieEdit[V] { return &trieEdit[V]{root: m.root, n: m.n} }

// done returns the new map.
func (e *trieEdit[V]) done() hashTrie[V] {
	m := hashTrie[V]{root: e.root, n: e.n}
	e.root = nil
	return m
}

// own returns n, or a copy of it that e may change (n may be nil).
func (e *trieEdit[V]) own(n *trieNode[V]) *trieNode[V] {
	if n == nil {
		return &trieNode[V]{edit: e}
	}
	if n.edit == e {
		return n
	}
	return &trieNode[V]{edit: e, bitmap: n.bitmap, slots: append(make([]trieSlot[V], 0, len(n.slots)+1), n.slots...)}
}

// set maps key to val.
func (e *trieEdit[V]) set(key string, val V) { e.setHashed(xxhash.Sum64String(key), key, val) }

// setHashed is set with key's hash h given.
func (e *trieEdit[V]) setHashed(h uint64, key string, val V) {
	e.root = e.setIn(e.root, 0, &trieLeaf[V]{hash: h, key: key, val: val})
}

func (e *trieEdit[V]) setIn(n *trieNode[V], shift uint, l *trieLeaf[V]) *trieNode[V] {
	n = e.own(n)
	bit := uint32(1) << ((l.hash >> shift) & trieMask)
	i := bits.OnesCount32(n.bitmap & (bit - 1))
	if n.bitmap&bit == 0 {
		n.bitmap |= bit
		n.slots = append(n.slots, trieSlot[V]{})
		copy(n.slots[i+1:], n.slots[i:])
		n.slots[i] = trieSlot[V]{leaf: l}
		e.n++
		return n
	}
	s := &n.slots[i]
	switch {
	case s.node != nil:
		s.node = e.setIn(s.node, shift+trieBits, l)
	case s.leaf.hash == l.hash:
		s.leaf = e.replaceInChain(s.leaf, l)
	default:
		// Two hashes share this slot: push both one level down. They
		// differ in some bit, so they part at some level.
		child := e.setIn(nil, shift+trieBits, s.leaf)
		e.n-- // s.leaf was counted already
		s.leaf = nil
		s.node = e.setIn(child, shift+trieBits, l)
	}
	return n
}

// replaceInChain returns chain with l's key set to l (copying the chain).
func (e *trieEdit[V]) replaceInChain(chain, l *trieLeaf[V]) *trieLeaf[V] {
	var out *trieLeaf[V]
	found := false
	for c := chain; c != nil; c = c.next {
		if c.key == l.key {
			found = true
			continue
		}
		out = &trieLeaf[V]{hash: c.hash, key: c.key, val: c.val, next: out}
	}
	if !found {
		e.n++
	}
	l.next = out
	return l
}

// del removes key (a missing key is no change).
func (e *trieEdit[V]) del(key string) { e.delHashed(xxhash.Sum64String(key), key) }

// delHashed is del with key's hash h given.
func (e *trieEdit[V]) delHashed(h uint64, key string) {
	if e.root == nil {
		return
	}
	if l := (hashTrie[V]{root: e.root}).chain(h); l == nil || !chainHas(l, key) {
		return
	}
	e.root = e.delIn(e.root, 0, h, key)
	e.n--
}

func chainHas[V any](l *trieLeaf[V], key string) bool {
	for ; l != nil; l = l.next {
		if l.key == key {
			return true
		}
	}
	return false
}

// delIn removes key, which is there, from n. It returns nil when n ends up
// empty; a node left with one leaf and no child is folded into its parent.
func (e *trieEdit[V]) delIn(n *trieNode[V], shift uint, h uint64, key string) *trieNode[V] {
	n = e.own(n)
	bit := uint32(1) << ((h >> shift) & trieMask)
	i := bits.OnesCount32(n.bitmap & (bit - 1))
	s := &n.slots[i]
	if s.node != nil {
		child := e.delIn(s.node, shift+trieBits, h, key)
		switch {
		case child == nil:
		case len(child.slots) == 1 && child.slots[0].leaf != nil:
			s.node, s.leaf = nil, child.slots[0].leaf
			return n
		default:
			s.node = child
			return n
		}
	} else {
		var rest *trieLeaf[V]
		for c := s.leaf; c != nil; c = c.next {
			if c.key != key {
				rest = &trieLeaf[V]{hash: c.hash, key: c.key, val: c.val, next: rest}
			}
		}
		if rest != nil {
			s.leaf = rest
			return n
		}
	}
	// The slot is empty now.
	n.bitmap &^= bit
	copy(n.slots[i:], n.slots[i+1:])
	n.slots[len(n.slots)-1] = trieSlot[V]{}
	n.slots = n.slots[:len(n.slots)-1]
	if len(n.slots) == 0 {
		return nil
	}
	return n
}
