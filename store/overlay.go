package store

import (
	"fmt"
	"maps"
)

// Overlay is an object shown in place of the stored one with its
// namespace and name (or beside the others when none is stored) under
// Alias, in one snapshot only: the candidate of an admission review.
type Overlay struct {
	Alias  string
	Object map[string]any
}

// SnapshotWith returns the current snapshot with the overlays applied,
// leaving the store as it is: what a render would read if the overlays'
// objects were stored. An overlay replaces the stored object whatever
// the resourceVersions say. The result shares everything the overlays
// do not touch with [Memory.Snapshot]'s; each alias an overlay touches
// is derived from its current view in O(k log n), as a store update is.
//
// An overlaid alias is on no change log: [Snapshot.ChangesSince] between
// it and any other snapshot reports unknown, so a render of the result
// re-checks that alias whole, and a render of a later snapshot after it
// re-checks it again; the untouched aliases compare as usual.
func (s *Memory) SnapshotWith(overlays ...Overlay) (*Snapshot, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	base := s.snap
	if base == nil {
		base = &Snapshot{views: make(map[string]*aliasView, len(s.aliases))}
		for alias, st := range s.aliases {
			base.views[alias] = s.viewLocked(st)
		}
		s.snap = base
	}
	if len(overlays) == 0 {
		return base, nil
	}
	// After viewLocked, st.objs is what st.view holds; the changes are
	// made against that, without touching st.
	byAlias := map[string][]entryChange{}
	seen := map[string]*storeEntry{}
	for _, o := range overlays {
		st, ok := s.aliases[o.Alias]
		if !ok {
			ns, name, _ := ObjectMeta(o.Object)
			return nil, fmt.Errorf("store %s %s/%s: %w", o.Alias, ns, name, ErrUnknownAlias)
		}
		e, err := st.newEntry(o.Alias, o.Object)
		if err != nil {
			return nil, err
		}
		key := o.Alias + "\x00" + e.id
		if _, dup := seen[key]; dup {
			return nil, fmt.Errorf("store %s %s/%s: overlaid twice", o.Alias, e.namespace, e.name)
		}
		seen[key] = e
		byAlias[o.Alias] = append(byAlias[o.Alias], entryChange{old: st.objs[e.id], new: e})
	}
	snap := &Snapshot{views: maps.Clone(base.views)}
	for alias, changes := range byAlias {
		v, _, ok := deriveView(base.views[alias], changes)
		if !ok {
			// The view was not in order (an object changed after it was
			// stored): build the overlaid alias afresh.
			objs := maps.Clone(s.aliases[alias].objs)
			for _, c := range changes {
				objs[c.new.id] = c.new
			}
			v = buildView(&aliasState{exprs: s.aliases[alias].exprs, objs: objs})
		}
		v.log, v.logged = nil, nil
		snap.views[alias] = v
	}
	return snap, nil
}
