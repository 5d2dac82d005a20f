package renderplan

import (
	"bytes"
	"slices"
)

// A map that changed between two builds usually changed by a few
// entries (a route added: one entry inserted). A Cache then makes the
// map's file and its part of the plan's encoding from those of the map's
// previous version, copying the bytes of the entries found again in runs
// and rendering only the others. Each entry's bytes depend on the entry
// alone (a line of the file, an object of the encoding), so the result is
// the same as rendering every entry, whatever the entries hold.

// entryRun is a run of a map's entries: entries[at:at+n] of the new
// version, equal one for one to entries[from:from+n] of the previous
// version, or, with from < 0, not found in it.
type entryRun struct{ at, n, from int }

// diffEntries appends to dst the runs that make up cur, matching its
// entries against old. Both are usually sorted by key (unordered maps):
// it walks them in step, so it finds every entry found again in sorted
// versions; in other orders it finds fewer, which costs only speed.
func diffEntries(dst []entryRun, old, cur []MapEntry) []entryRun {
	k := 0
	for j := 0; j < len(cur); {
		for k < len(old) && old[k].Key < cur[j].Key {
			k++
		}
		if k < len(old) && old[k] == cur[j] {
			r := entryRun{at: j, from: k}
			for j < len(cur) && k < len(old) && old[k] == cur[j] {
				j++
				k++
			}
			r.n = j - r.at
			dst = append(dst, r)
			continue
		}
		if n := len(dst); n > 0 && dst[n-1].from < 0 {
			dst[n-1].n++
		} else {
			dst = append(dst, entryRun{at: j, n: 1, from: -1})
		}
		j++
	}
	return dst
}

// entriesSorted reports whether entries are sorted by compareEntries,
// given the runs matching them against old's (nil if there is no old).
// The entries of an unordered map's entry are sorted, so only the pairs
// that do not lie in one run are compared.
func entriesSorted(entries []MapEntry, old *mapEntry, runs []entryRun) bool {
	if old == nil || old.ordered {
		return sortedPrefix(entries, compareEntries) == len(entries)
	}
	for _, r := range runs {
		first, end := r.at, r.at+r.n
		if r.from >= 0 {
			end = first + 1 // the rest of the run follows in order
		}
		for j := max(first, 1); j < end; j++ {
			if compareEntries(entries[j-1], entries[j]) > 0 {
				return false
			}
		}
	}
	return true
}

// mapTextFrom returns MapText of a map with the given entries, made of
// runs (diffEntries(prev.entries, entries)) and prev.body, the file of
// prev.entries. The file is allocated once and not cleared first
// (bytes.Join): it is written whole.
func mapTextFrom(prev *mapEntry, entries []MapEntry, runs []entryRun) []byte {
	if len(runs) == 0 {
		return MapText(Map{Entries: entries})
	}
	// The lines of the new entries, rendered into one buffer first, so
	// that they can be sliced out of it.
	var fresh []byte
	for _, r := range runs {
		if r.from < 0 {
			fresh = appendMapText(fresh, &Map{Entries: entries[r.at : r.at+r.n]})
		}
	}
	parts := make([][]byte, 0, len(runs))
	k, off := 0, 0 // an entry of prev and where its line starts in prev.body
	used := 0      // of fresh
	for _, r := range runs {
		if r.from < 0 {
			n := mapTextSize(&Map{Entries: entries[r.at : r.at+r.n]})
			parts = append(parts, fresh[used:used+n])
			used += n
			continue
		}
		for ; k < r.from; k++ {
			off += mapLineSize(&prev.entries[k])
		}
		start := off
		for ; k < r.from+r.n; k++ {
			off += mapLineSize(&prev.entries[k])
		}
		parts = append(parts, prev.body[start:off])
	}
	return bytes.Join(parts, nil)
}

// mapLineSize is the length of e's line in MapText.
func mapLineSize(e *MapEntry) int { return len(e.Key) + len(e.Value) + 2 }

// encodeMap returns what encoder.mapJSON writes for m and where each
// entry's object starts in it, with one more start after the last entry
// (where a further entry would start): entry i's object is
// enc[starts[i]:starts[i+1]-1]. With prev (its enc and starts set), the
// objects of the runs found in prev are copied from prev.enc; without,
// runs are ignored and every entry encoded.
func encodeMap(m *Map, prev *mapEntry, runs []entryRun) (enc []byte, starts []int) {
	return encodeMapInto(nil, nil, m, prev, runs)
}

// encodeMapInto is encodeMap writing into buf and starts (their
// contents are overwritten) as far as they have room.
func encodeMapInto(buf []byte, starts []int, m *Map, prev *mapEntry, runs []entryRun) ([]byte, []int) {
	size := 64 + len(m.Path)
	if prev != nil {
		size += len(prev.enc) + 64*(len(m.Entries)-len(prev.entries))
	} else {
		for i := range m.Entries {
			size += 24 + mapLineSize(&m.Entries[i])
		}
	}
	e := encoder{buf: slices.Grow(buf[:0], max(size, 64))}
	e.raw(`{"path":`)
	e.str(m.Path)
	if m.Ordered {
		e.raw(`,"ordered":true`)
	}
	if len(m.Entries) == 0 {
		e.raw(`}`)
		return e.buf, nil
	}
	starts = slices.Grow(starts[:0], len(m.Entries)+1)
	e.raw(`,"entries":[`)
	newEntries := func(at, n int) {
		for j := at; j < at+n; j++ {
			e.sep(j)
			starts = append(starts, len(e.buf))
			e.mapEntry(&m.Entries[j])
		}
	}
	if prev == nil {
		newEntries(0, len(m.Entries))
	} else {
		for _, r := range runs {
			if r.from < 0 {
				newEntries(r.at, r.n)
				continue
			}
			e.sep(r.at)
			shift := len(e.buf) - prev.encStarts[r.from]
			for i := r.from; i < r.from+r.n; i++ {
				starts = append(starts, prev.encStarts[i]+shift)
			}
			e.buf = append(e.buf, prev.enc[prev.encStarts[r.from]:prev.encStarts[r.from+r.n]-1]...)
		}
	}
	starts = append(starts, len(e.buf)+1)
	e.raw(`]}`)
	return e.buf, starts
}

// encodeFrom sets e's encoding, that of map m, from prev's if prev has
// one, reusing the runs of entries found in it. It is for a map that
// changed since the previous build: such a map likely changes again, so
// its encoding is kept for the next build to start from.
//
// prev is the entry e replaces in the cache, whose encoding nothing uses
// once e's is made (encodings never reach an output): e writes into the
// buffers prev took over from its own predecessor, and takes prev's
// over for its successor, so that a map changing build after build does
// not allocate its encoding every time.
func (e *mapEntry) encodeFrom(m *Map, prev *mapEntry, runs []entryRun) {
	if prev == nil {
		e.enc, e.encStarts = encodeMap(m, nil, nil)
		return
	}
	from := prev
	if prev.enc == nil || len(prev.entries) == 0 {
		from = nil
	}
	e.enc, e.encStarts = encodeMapInto(prev.spareEnc, prev.spareStarts, m, from, runs)
	e.spareEnc, e.spareStarts = prev.enc, prev.encStarts
	prev.enc, prev.encStarts, prev.spareEnc, prev.spareStarts = nil, nil, nil, nil
}
