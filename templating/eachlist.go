package templating

import (
	"strings"
	"unsafe"
)

// A renderEach call after one change walks its item list once, comparing
// item identities with last render's (dense slices, no result loaded),
// and checks one by one only the results whose inputs may have changed:
// all of them when a cacheGet value any of them read changed, a map they
// wrote is no longer registered, or the store cannot tell which Services
// changed; else those whose backends' servers come from a Service or
// EndpointSlice that changed. Its output is last render's, with the
// changed items' parts spliced in.

// itemChecks says which of a call's earlier results must be checked one
// by one before they are replayed.
type itemChecks struct {
	all      bool
	suspects map[*eachResult]struct{}
}

func (c *itemChecks) needed(res *eachResult) bool {
	if c.all {
		return true
	}
	_, ok := c.suspects[res]
	return ok
}

// checksFor decides which results of seg need checking in this render.
func (r *renderState) checksFor(seg *segment, prints *cachePrints) *itemChecks {
	c := &itemChecks{}
	if seg.reads == nil {
		c.all = true // no bookkeeping yet
		return c
	}
	for key, fp := range seg.reads {
		if prints.get(key) != fp {
			c.all = true
			return c
		}
	}
	for name := range seg.maps {
		if _, ok := r.mapsByKey[name]; !ok {
			c.all = true
			return c
		}
	}
	if len(seg.bySvc) == 0 {
		return c
	}
	d := r.servicesDelta()
	if !d.ok {
		c.all = true
		return c
	}
	for pair := range d.pairs {
		for _, res := range seg.bySvc[pair] {
			if c.suspects == nil {
				c.suspects = map[*eachResult]struct{}{}
			}
			c.suspects[res] = struct{}{}
		}
	}
	return c
}

// replace makes results the segment's list. from[i] is the old position
// of results[i], or -1 for the results executed in this render, which
// are at the positions fresh. It splices the output, keeps the
// bookkeeping of reads, maps and Services, and returns the old results
// that went.
func (seg *segment) replace(results []*eachResult, from, fresh []int, prints *cachePrints) []*eachResult {
	seg.splice(results, from)
	used := make([]bool, len(seg.results))
	keys := make([]unsafe.Pointer, len(results))
	for i, j := range from {
		if j >= 0 {
			used[j] = true
			keys[i] = seg.keys[j]
		} else {
			keys[i] = results[i].key
		}
	}
	var removed []*eachResult
	for j, u := range used {
		if !u {
			removed = append(removed, seg.results[j])
		}
	}
	rebuild := seg.reads == nil || len(seg.reads) > 4*len(results)+64 || len(seg.maps) > 4*len(results)+64
	seg.results, seg.keys = results, keys
	if rebuild {
		seg.reads, seg.maps, seg.bySvc = map[string]uint64{}, map[string]struct{}{}, map[string][]*eachResult{}
		for _, res := range results {
			seg.note(res)
		}
	} else {
		for _, res := range removed {
			seg.forget(res)
		}
		for _, i := range fresh {
			seg.note(results[i])
		}
	}
	// Every result is now checked against this render's values.
	for key := range seg.reads {
		seg.reads[key] = prints.get(key)
	}
	return removed
}

// splice builds the call's output: runs of kept results are copied from
// the old output at once.
func (seg *segment) splice(results []*eachResult, from []int) {
	size := 0
	for i, j := range from {
		if j >= 0 {
			size += seg.offs[j+1] - seg.offs[j]
		} else {
			size += len(results[i].out)
		}
	}
	var b strings.Builder
	b.Grow(size)
	offs := make([]int, len(results)+1)
	for i := 0; i < len(results); {
		offs[i] = b.Len()
		j := from[i]
		if j < 0 {
			b.WriteString(results[i].out)
			i++
			continue
		}
		k := i + 1
		for k < len(results) && from[k] >= 0 && from[k] == from[k-1]+1 {
			offs[k] = offs[i] + seg.offs[from[k]] - seg.offs[j]
			k++
		}
		b.WriteString(seg.out[seg.offs[j]:seg.offs[from[k-1]+1]])
		i = k
	}
	offs[len(results)] = b.Len()
	seg.out, seg.offs = b.String(), offs
}

// note records what res read and wrote.
func (seg *segment) note(res *eachResult) {
	for _, d := range res.deps {
		seg.reads[d.key] = d.fp
	}
	for i := range res.ops {
		op := &res.ops[i]
		switch op.kind {
		case opMapEntry:
			seg.maps[op.mapName] = struct{}{}
		case opBackend:
			if k := op.be.svcKey; k != nil {
				pair := k.ns + "\x00" + k.svc
				seg.bySvc[pair] = append(seg.bySvc[pair], res)
			}
		}
	}
}

// forget drops res from the Services' lists.
func (seg *segment) forget(res *eachResult) {
	for i := range res.ops {
		op := &res.ops[i]
		if op.kind != opBackend || op.be.svcKey == nil {
			continue
		}
		pair := op.be.svcKey.ns + "\x00" + op.be.svcKey.svc
		list := seg.bySvc[pair]
		for n, x := range list {
			if x == res {
				list = append(list[:n], list[n+1:]...)
				break
			}
		}
		if len(list) == 0 {
			delete(seg.bySvc, pair)
		} else {
			seg.bySvc[pair] = list
		}
	}
}
