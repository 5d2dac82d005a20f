package store

import (
	"fmt"
	"maps"
	"math/bits"
	"math/rand/v2"
	"testing"

	"github.com/cespare/xxhash/v2"
)

// trieHashes are the hash functions the trie is tested with: the real one,
// and weak ones that make whole-hash collisions (leaf chains) and hashes
// that agree on all but their top bits (deep paths that fold up again on
// delete).
var trieHashes = map[string]func(string) uint64{
	"xxhash":         xxhash.Sum64String,
	"eight values":   func(k string) uint64 { return xxhash.Sum64String(k) % 8 },
	"only top bits":  func(k string) uint64 { return (xxhash.Sum64String(k) % 8) << 61 },
	"few low values": func(k string) uint64 { return xxhash.Sum64String(k)%64 | 1<<40 },
}

func TestHashTrieMatchesAMapAndOldVersionsNeverChange(t *testing.T) {
	for name, hash := range trieHashes {
		t.Run(name, func(t *testing.T) {
			for seed := uint64(0); seed < 20; seed++ {
				rng := rand.New(rand.NewPCG(seed, 7))
				keys := make([]string, 1+rng.IntN(300))
				for i := range keys {
					keys[i] = fmt.Sprintf("ns-%d\x00obj-%d", i%7, i)
				}
				type version struct {
					m    hashTrie[int]
					want map[string]int
				}
				var versions []version
				cur, want := hashTrie[int]{}, map[string]int{}
				for step := 0; step < 40; step++ {
					ed := cur.edit()
					for op := rng.IntN(30); op >= 0; op-- {
						k := keys[rng.IntN(len(keys))]
						if rng.IntN(3) == 0 {
							ed.delHashed(hash(k), k)
							delete(want, k)
						} else {
							v := rng.Int()
							ed.setHashed(hash(k), k, v)
							want[k] = v
						}
					}
					cur = ed.done()
					versions = append(versions, version{cur, maps.Clone(want)})
				}
				for i, v := range versions {
					if err := checkTrie(v.m, v.want, keys, hash); err != nil {
						t.Fatalf("seed %d, version %d: %v", seed, i, err)
					}
				}
			}
		})
	}
}

// checkTrie compares m with want on every key and checks its shape.
func checkTrie(m hashTrie[int], want map[string]int, keys []string, hash func(string) uint64) error {
	if m.size() != len(want) {
		return fmt.Errorf("size %d, want %d", m.size(), len(want))
	}
	for _, k := range keys {
		got, ok := m.getHashed(hash(k), k)
		w, wok := want[k]
		if ok != wok || got != w {
			return fmt.Errorf("get %q = %d, %v; want %d, %v", k, got, ok, w, wok)
		}
	}
	if m.root == nil {
		return nil
	}
	leaves, err := checkTrieNode(m.root, 0, 0, true)
	if err != nil {
		return err
	}
	if leaves != len(want) {
		return fmt.Errorf("%d leaves, want %d", leaves, len(want))
	}
	return nil
}

// checkTrieNode checks that n's bitmap and slots agree, that every hash
// under it starts with prefix (its low shift bits), and that no node but
// the root is empty or holds a lone leaf (deletes fold those up).
func checkTrieNode(n *trieNode[int], shift uint, prefix uint64, root bool) (int, error) {
	if bits.OnesCount32(n.bitmap) != len(n.slots) {
		return 0, fmt.Errorf("bitmap %b, %d slots", n.bitmap, len(n.slots))
	}
	if !root && (len(n.slots) == 0 || len(n.slots) == 1 && n.slots[0].leaf != nil) {
		return 0, fmt.Errorf("inner node at shift %d with %d slots not folded", shift, len(n.slots))
	}
	count, i := 0, 0
	for b := uint64(0); b <= trieMask; b++ {
		if n.bitmap&(1<<b) == 0 {
			continue
		}
		s := n.slots[i]
		i++
		p := prefix | b<<shift
		if (s.node == nil) == (s.leaf == nil) {
			return 0, fmt.Errorf("slot at shift %d holds a node and a leaf, or neither", shift)
		}
		if s.node != nil {
			c, err := checkTrieNode(s.node, shift+trieBits, p, false)
			if err != nil {
				return 0, err
			}
			count += c
			continue
		}
		var mask uint64 = 1<<(shift+trieBits) - 1
		if shift+trieBits >= 64 {
			mask = ^uint64(0)
		}
		seen := map[string]bool{}
		for l := s.leaf; l != nil; l = l.next {
			if l.hash != s.leaf.hash || l.hash&mask != p {
				return 0, fmt.Errorf("leaf %q (hash %x) in the wrong slot", l.key, l.hash)
			}
			if seen[l.key] {
				return 0, fmt.Errorf("key %q twice in a chain", l.key)
			}
			seen[l.key] = true
			count++
		}
	}
	return count, nil
}

func TestHashTrieGetBytesFindsWhatGetFinds(t *testing.T) {
	ed := hashTrie[string]{}.edit()
	ed.set("a\x00b", "ab")
	ed.set("", "empty")
	m := ed.done()
	for _, k := range []string{"a\x00b", "", "a", "a\x00b\x00"} {
		v1, ok1 := m.get(k)
		v2, ok2 := m.getBytes([]byte(k))
		if v1 != v2 || ok1 != ok2 {
			t.Errorf("key %q: get = %q, %v; getBytes = %q, %v", k, v1, ok1, v2, ok2)
		}
	}
	if v, ok := m.get(""); !ok || v != "empty" {
		t.Errorf(`get("") = %q, %v`, v, ok)
	}
}

func TestHashTrieSetOfAPresentKeyKeepsTheSize(t *testing.T) {
	m := hashTrie[int]{}
	for i := 0; i < 3; i++ {
		ed := m.edit()
		ed.set("k", i)
		ed.del("missing")
		m = ed.done()
	}
	if v, _ := m.get("k"); m.size() != 1 || v != 2 {
		t.Errorf("size %d, k = %d; want 1, 2", m.size(), v)
	}
}
