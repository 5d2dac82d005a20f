package renderplan

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestMapsMadeFromThePreviousVersionEqualRenderingThemWhole changes maps
// version after version (entries inserted, deleted, changed, duplicated,
// shuffled; keys and values that need JSON escaping) and checks that the
// file and encoding made from the previous version are those of MapText
// and the encoder, that the entry starts locate each entry, and that
// entriesSorted, which compares only across runs, agrees with comparing
// every pair.
func TestMapsMadeFromThePreviousVersionEqualRenderingThemWhole(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	words := []string{"a", "b.example", "<x>", `q"`, "é", "\u2028", "svc.ns.example.com/path", "\xff", "v v", "t\tt"}
	entry := func() MapEntry {
		return MapEntry{Key: words[r.IntN(len(words))] + fmt.Sprint(r.IntN(50)), Value: words[r.IntN(len(words))]}
	}
	for seq := range 200 {
		m := Map{Path: "maps/m.map", Ordered: seq%5 == 0}
		for range r.IntN(8) {
			m.Entries = append(m.Entries, entry())
		}
		prev := &mapEntry{entries: m.Entries, body: MapText(m)}
		prev.enc, prev.encStarts = encodeMap(&m, nil, nil)
		checkMapEncoding(t, &m, prev)
		for version := range 10 {
			e := slices.Clone(m.Entries)
			switch r.IntN(6) {
			case 0:
				e = append(e, entry())
			case 1:
				x := entry()
				at, _ := slices.BinarySearchFunc(e, x.Key, func(a MapEntry, k string) int { return strings.Compare(a.Key, k) })
				e = slices.Insert(e, at, x)
			case 2:
				if len(e) > 0 {
					i := r.IntN(len(e))
					e = slices.Delete(e, i, i+1)
				}
			case 3:
				if len(e) > 0 {
					e[r.IntN(len(e))].Value = entry().Value
				}
			case 4:
				if len(e) > 0 {
					e = slices.Insert(e, r.IntN(len(e)), e[r.IntN(len(e))])
				}
			case 5:
				r.Shuffle(len(e), func(i, j int) { e[i], e[j] = e[j], e[i] })
			}
			if !m.Ordered && r.IntN(2) == 0 {
				slices.SortFunc(e, func(a, b MapEntry) int { return strings.Compare(a.Key, b.Key) })
			}
			m.Entries = e
			runs := diffEntries(nil, prev.entries, m.Entries)
			if sortedPrefix(prev.entries, compareEntries) == len(prev.entries) {
				// As the entries of an unordered map's cache entry are.
				old := &mapEntry{entries: prev.entries}
				want := sortedPrefix(m.Entries, compareEntries) == len(m.Entries)
				if got := entriesSorted(m.Entries, old, runs); got != want {
					t.Fatalf("sequence %d, version %d: entriesSorted says %v for %v, want %v", seq, version, got, m.Entries, want)
				}
			}
			made := &mapEntry{entries: m.Entries, body: mapTextFrom(prev, m.Entries, runs)}
			if want := MapText(m); string(made.body) != string(want) {
				t.Fatalf("sequence %d, version %d: file made from the previous version is %q, want %q", seq, version, made.body, want)
			}
			made.encodeFrom(&m, prev, runs)
			checkMapEncoding(t, &m, made)
			prev = made
		}
	}
}

// checkMapEncoding checks e.enc and e.encStarts against the encoder's
// encoding of m.
func checkMapEncoding(t *testing.T, m *Map, e *mapEntry) {
	t.Helper()
	want := encoder{}
	want.mapJSON(m)
	if string(e.enc) != string(want.buf) {
		t.Fatalf("encoding of %+v is %s, want %s", m.Entries, e.enc, want.buf)
	}
	if len(m.Entries) == 0 {
		if e.encStarts != nil {
			t.Fatalf("map without entries has entry starts %v", e.encStarts)
		}
		return
	}
	if len(e.encStarts) != len(m.Entries)+1 {
		t.Fatalf("%d entry starts for %d entries", len(e.encStarts), len(m.Entries))
	}
	for i := range m.Entries {
		one := encoder{}
		one.mapEntry(&m.Entries[i])
		if got := e.enc[e.encStarts[i] : e.encStarts[i+1]-1]; string(got) != string(one.buf) {
			t.Fatalf("entry %d located at %s, want %s", i, got, one.buf)
		}
	}
}
