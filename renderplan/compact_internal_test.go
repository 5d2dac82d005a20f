package renderplan

import (
	"fmt"
	"testing"
	"unsafe"
)

// growOneByOne builds n plans, each with one more backend than the last.
func growOneByOne(t testing.TB, c *Cache, n int) {
	t.Helper()
	profiles := []Profile{{Name: "web", Mode: "http"}}
	pieces := []Piece{{Kind: SectionProfile, Name: "web", Text: ProfileText("web", []string{"mode http"})}}
	var backends []Backend
	for i := range n {
		name := fmt.Sprintf("be_%03d", i)
		backends = append(backends, Backend{Name: name, GUID: "g-" + name, Profile: "web"})
		pieces = append(pieces, Piece{Kind: SectionBackend, Name: name})
		out, err := c.NewOutput(pieces, profiles, backends, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		_ = out.ID() // as the controller does; it also encodes the entries' parts
	}
}

func TestCompactMovesTheEntriesOfTheLastBuildNextToEachOther(t *testing.T) {
	var c Cache
	growOneByOne(t, &c, 100)
	if !c.Compact() {
		t.Fatal("Compact after 100 new entries did nothing")
	}
	size := unsafe.Sizeof(backendEntry{})
	first := uintptr(unsafe.Pointer(c.last[0]))
	text := uintptr(unsafe.Pointer(unsafe.StringData(c.last[0].text)))
	for k, e := range c.last {
		if got := uintptr(unsafe.Pointer(e)); got != first+uintptr(k)*size {
			t.Fatalf("entry %d is not next to entry %d", k, k-1)
		}
		if got := uintptr(unsafe.Pointer(unsafe.StringData(e.text))); got != text {
			t.Fatalf("entry %d's text does not follow entry %d's", k, k-1)
		}
		text += uintptr(len(e.text))
		if cached, _ := c.backends.get(e.be.Name); cached != e {
			t.Fatalf("the cache names %s's old entry, not the moved one", e.be.Name)
		}
		// The plan ID encodes an entry's parts from its second build on.
		if e.born != c.gen && (e.sec == nil || e.enc == nil) {
			t.Fatalf("entry %d lost its encodings", k)
		}
	}
	if c.Compact() {
		t.Error("a second Compact without new entries copied them again")
	}
}

func TestCompactWaitsForFewNewEntries(t *testing.T) {
	var c Cache
	growOneByOne(t, &c, compactMin-1)
	if c.Compact() {
		t.Errorf("Compact copied after %d new entries, fewer than %d", compactMin-1, compactMin)
	}
	growOneByOne(t, &c, compactMin) // one more backend, after a build of the same ones
	if !c.Compact() {
		t.Errorf("Compact did nothing after %d new entries", c.born)
	}
}

// BenchmarkCompact measures one compaction of 1,000 backends' entries
// (B/op is what a compaction allocates besides the entries it moves).
func BenchmarkCompact(b *testing.B) {
	var c Cache
	growOneByOne(b, &c, 1000)
	b.ReportAllocs()
	for b.Loop() {
		c.born = len(c.last) // as after as many new entries
		if !c.Compact() {
			b.Fatal("Compact did nothing")
		}
	}
}
