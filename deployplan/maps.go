package deployplan

import (
	"github.com/haptic-io/haptic/agentapi/runtimeop"
	"github.com/haptic-io/haptic/renderplan"
)

// diffMaps merges the two sorted map lists; it reports false, having done
// nothing, when one is not sorted and unique by path.
func (d *differ) diffMaps() bool {
	a, b := d.base.Maps, d.next.Maps
	if !sortedUnique(a, mapPath) || !sortedUnique(b, mapPath) {
		return false
	}
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case j == len(b) || i < len(a) && a[i].Path < b[j].Path:
			d.mustReload("map "+a[i].Path, "removed (HAProxy loads map files only at startup)")
			i++
		case i == len(a) || b[j].Path < a[i].Path:
			d.mustReload("map "+b[j].Path, "added (HAProxy loads map files only at startup)")
			j++
		default:
			d.changeMap(&a[i], &b[j])
			i++
			j++
		}
	}
	return true
}

func (d *differ) changeMap(a, b *renderplan.Map) {
	x, y := a.Entries, b.Entries
	if sameEntries(x, y) {
		// The same backing array (plans built by one renderplan.Cache share
		// unchanged maps): nothing changed, whatever the order.
		return
	}
	var c entryChanges
	if !a.Ordered && !b.Ordered {
		c = countEntryChanges(x, y)
	}
	if a.Ordered || b.Ordered || !c.sorted {
		if entriesEqual(x, y) {
			return
		}
		d.emit(replaceMap(b))
		d.runtime("map "+b.Path, "ordered map changed (%d entries), replaced atomically", len(y))
		return
	}

	// Unordered, unique keys: per-entry upserts and deletes. "set" for
	// existing keys and "add" only for new ones, so no key is ever
	// duplicated (3.4.7's "del map" would remove only one copy).
	changes := c.adds + c.sets + c.dels
	if changes == 0 {
		return
	}
	if mapReplaceWorthIt(changes, len(y)) {
		d.emit(replaceMap(b))
		d.runtime("map "+b.Path, "%s; replaced atomically (%d entries)", countPhrase(c.adds, c.dels, c.sets), len(y))
		return
	}
	// Everything before (c.i, c.j) pairs up unchanged: start there and stop
	// after the last change.
	i, j := c.i, c.j
	for left := changes; left > 0; {
		switch {
		case i < len(x) && j < len(y) && x[i].Key == y[j].Key:
			if x[i].Value != y[j].Value {
				d.emit(runtimeop.Op{Kind: runtimeop.OpSetMapEntry, Map: b.Path, Key: y[j].Key, Value: y[j].Value})
				left--
			}
			i++
			j++
		case j == len(y) || i < len(x) && x[i].Key < y[j].Key:
			d.emit(runtimeop.Op{Kind: runtimeop.OpDelMapEntry, Map: b.Path, Key: x[i].Key})
			left--
			i++
		default:
			d.emit(runtimeop.Op{Kind: runtimeop.OpAddMapEntry, Map: b.Path, Key: y[j].Key, Value: y[j].Value})
			left--
			j++
		}
	}
	d.runtime("map "+b.Path, "entries: %s", countPhrase(c.adds, c.dels, c.sets))
}

// entryChanges is what one walk over two unordered maps' entries found.
type entryChanges struct {
	// sorted says both entry lists are sorted by key with unique keys;
	// when false, the counts are meaningless.
	sorted           bool
	adds, sets, dels int
	// i and j are where the first change was met.
	i, j int
}

// countEntryChanges merges two entry lists by key in step, counting the
// keys added, re-valued and deleted, and checks on the way that both are
// sorted with unique keys. A key that pairs right after another pair needs
// only y's order check: equal keys on both sides order alike.
func countEntryChanges(x, y []renderplan.MapEntry) entryChanges {
	c := entryChanges{i: len(x), j: len(y)}
	first := true
	change := func(i, j int) {
		if first {
			c.i, c.j, first = i, j, false
		}
	}
	i, j := 0, 0
	paired := false
	for i < len(x) && j < len(y) {
		if x[i].Key == y[j].Key {
			if j > 0 && y[j-1].Key >= y[j].Key || !paired && i > 0 && x[i-1].Key >= x[i].Key {
				return entryChanges{}
			}
			if x[i].Value != y[j].Value {
				change(i, j)
				c.sets++
			}
			i, j, paired = i+1, j+1, true
			continue
		}
		paired = false
		change(i, j)
		if x[i].Key < y[j].Key {
			if i > 0 && x[i-1].Key >= x[i].Key {
				return entryChanges{}
			}
			c.dels++
			i++
		} else {
			if j > 0 && y[j-1].Key >= y[j].Key {
				return entryChanges{}
			}
			c.adds++
			j++
		}
	}
	if i < len(x) || j < len(y) {
		change(i, j)
	}
	for ; i < len(x); i++ {
		if i > 0 && x[i-1].Key >= x[i].Key {
			return entryChanges{}
		}
		c.dels++
	}
	for ; j < len(y); j++ {
		if j > 0 && y[j-1].Key >= y[j].Key {
			return entryChanges{}
		}
		c.adds++
	}
	c.sorted = true
	return c
}

func sameEntries(x, y []renderplan.MapEntry) bool {
	return len(x) == len(y) && (len(x) == 0 || &x[0] == &y[0])
}

func replaceMap(m *renderplan.Map) runtimeop.Op {
	entries := make([]runtimeop.MapEntry, len(m.Entries))
	for i, e := range m.Entries {
		entries[i] = runtimeop.MapEntry{Key: e.Key, Value: e.Value}
	}
	return runtimeop.Op{Kind: runtimeop.OpReplaceMap, Map: m.Path, Entries: entries}
}

func entriesEqual(a, b []renderplan.MapEntry) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
