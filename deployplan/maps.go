package deployplan

import (
	"strings"

	"github.com/haptic-io/haptic/agentapi"
	"github.com/haptic-io/haptic/renderplan"
)

// diffMaps merges the two sorted map lists.
func (d *differ) diffMaps() {
	a, b := d.base.Maps, d.next.Maps
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
}

func (d *differ) changeMap(a, b *renderplan.Map) {
	subject := "map " + b.Path
	if a.Ordered || b.Ordered || !uniqueSorted(a.Entries) || !uniqueSorted(b.Entries) {
		if entriesEqual(a.Entries, b.Entries) {
			return
		}
		d.emit(replaceMap(b))
		d.runtime(subject, "ordered map changed (%d entries), replaced atomically", len(b.Entries))
		return
	}

	// Unordered, unique keys: per-entry upserts and deletes. "set" for
	// existing keys and "add" only for new ones, so no key is ever
	// duplicated (3.4.7's "del map" would remove only one copy).
	var adds, sets, dels int
	x, y := a.Entries, b.Entries
	i, j := 0, 0
	for i < len(x) || j < len(y) {
		c := mergeStep(len(x)-i, len(y)-j, func() int { return strings.Compare(x[i].Key, y[j].Key) })
		switch {
		case c < 0:
			dels++
			i++
		case c > 0:
			adds++
			j++
		default:
			if x[i].Value != y[j].Value {
				sets++
			}
			i++
			j++
		}
	}
	changes := adds + sets + dels
	if changes == 0 {
		return
	}
	if mapReplaceWorthIt(changes, len(y)) {
		d.emit(replaceMap(b))
		d.runtime(subject, "%s; replaced atomically (%d entries)", countPhrase(adds, dels, sets), len(y))
		return
	}
	i, j = 0, 0
	for i < len(x) || j < len(y) {
		c := mergeStep(len(x)-i, len(y)-j, func() int { return strings.Compare(x[i].Key, y[j].Key) })
		switch {
		case c < 0:
			d.emit(agentapi.Op{Kind: agentapi.OpDelMapEntry, Map: b.Path, Key: x[i].Key})
			i++
		case c > 0:
			d.emit(agentapi.Op{Kind: agentapi.OpAddMapEntry, Map: b.Path, Key: y[j].Key, Value: y[j].Value})
			j++
		default:
			if x[i].Value != y[j].Value {
				d.emit(agentapi.Op{Kind: agentapi.OpSetMapEntry, Map: b.Path, Key: y[j].Key, Value: y[j].Value})
			}
			i++
			j++
		}
	}
	d.runtime(subject, "entries: %s", countPhrase(adds, dels, sets))
}

func replaceMap(m *renderplan.Map) agentapi.Op {
	entries := make([]agentapi.MapEntry, len(m.Entries))
	for i, e := range m.Entries {
		entries[i] = agentapi.MapEntry{Key: e.Key, Value: e.Value}
	}
	return agentapi.Op{Kind: agentapi.OpReplaceMap, Map: m.Path, Entries: entries}
}

func uniqueSorted(e []renderplan.MapEntry) bool {
	for i := 1; i < len(e); i++ {
		if e[i-1].Key >= e[i].Key {
			return false
		}
	}
	return true
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
