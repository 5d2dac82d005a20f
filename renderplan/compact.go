package renderplan

import "strings"

// compactShare and compactMin say when [Cache.Compact] is worth its
// copy: when the entries made since the last compaction are an eighth of
// the latest build's, and at least 32.
const (
	compactShare = 8
	compactMin   = 32
)

// Compact moves what the cache holds for the backends of its last build
// next to each other, in the plan's order: the entries themselves and the
// section text and encodings every build reads for every backend, and
// reports whether it did. Entries are made one at a time, as backends
// appear, each among the garbage of its build; after many builds that
// add a few backends each, they lie all over the heap, and a build,
// which walks them all, spends much of its time waiting for memory (a
// 3,000-backend re-render took 1.5-2 times as long as after one build of
// them all, see libraries' BenchmarkRerenderOneChangeGrown). Compact
// copies them (about the size of the plan's encoding) when at least an
// eighth of them, and 32, were made since it last did, and does nothing
// otherwise, so it can be called after every build. It changes no
// output. Call it when nothing waits, as after a reconciliation: it
// waits for the ID of the last output.
func (c *Cache) Compact() bool {
	if c.born < max(compactMin, len(c.last)/compactShare) {
		return false
	}
	if c.idDone != nil {
		<-c.idDone // the ID reads the entries
		c.idDone = nil
	}
	// Only entries the cache still names move: another of the same name
	// (a build with two backends of one name) keeps its place.
	movable := func(e *backendEntry) bool {
		if e == nil {
			return false
		}
		cur, ok := c.backends.get(e.be.Name)
		return ok && cur == e
	}
	textSize, partSize := 0, 0
	for _, e := range c.last {
		if movable(e) {
			textSize += len(e.text)
			partSize += len(e.enc) + len(e.sec)
		}
	}
	// A Builder hands over its buffer as the string: the texts are
	// copied once, not a second time by a []byte-to-string conversion.
	var texts strings.Builder
	texts.Grow(textSize)
	for _, e := range c.last {
		if movable(e) {
			texts.WriteString(e.text)
		}
	}
	allText := texts.String()
	parts := make([]byte, 0, partSize)
	slab := make([]backendEntry, len(c.last))
	off := 0
	for k, e := range c.last {
		if !movable(e) {
			continue
		}
		moved := &slab[k]
		*moved = *e
		moved.text = allText[off : off+len(e.text)]
		off += len(e.text)
		moved.enc = appendPart(&parts, e.enc)
		moved.sec = appendPart(&parts, e.sec)
		c.backends.m[e.be.Name] = moved
		c.last[k] = moved
	}
	c.born = 0
	return true
}

// appendPart appends b to *buf, which has room for it, and returns the
// copy, capped to its length (nil for nil: the entry has none yet).
func appendPart(buf *[]byte, b []byte) []byte {
	if b == nil {
		return nil
	}
	start := len(*buf)
	*buf = append(*buf, b...)
	return (*buf)[start:len(*buf):len(*buf)]
}
