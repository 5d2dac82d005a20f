package store

// A view derived from the previous one records what changed between them
// in its alias's change log, so that a render can ask which objects
// changed since the snapshot an earlier render read ([Snapshot.changedSince])
// and skip re-checking everything else.

// changeLog is an alias's append-only record of changed objects, shared by
// the views derived one from another. A view sees the prefix of entries up
// to its end; appends never touch that prefix, so readers need no lock.
type changeLog struct {
	entries []changeEntry // guarded by the store's mu for appends
}

// changeEntry is one object's change: its id (namespace NUL name) and the
// index keys it had and has (indexKeys of the old and new entry).
type changeEntry struct {
	id       string
	old, new []string
}

// maxChangeLog bounds a log: a longer one is started afresh (views on the
// old log can then not be compared with later ones).
const maxChangeLog = 4096

// newLog starts a new change log at v, a view built afresh (before it is
// published): views derived from it will be comparable with it.
func (st *aliasState) newLog(v *aliasView) *aliasView {
	st.log = &changeLog{}
	v.log = st.log
	return v
}

// record appends changes to st's log (starting a new one when it is
// full) and returns the log and its entries up to the derived view.
func (st *aliasState) record(changes []entryChange) (*changeLog, []changeEntry) {
	if st.log == nil || len(st.log.entries)+len(changes) > maxChangeLog {
		st.log = &changeLog{}
	}
	for _, c := range changes {
		e := changeEntry{}
		if c.old != nil {
			e.id, e.old = c.old.id, c.old.indexKeys
		}
		if c.new != nil {
			e.id, e.new = c.new.id, c.new.indexKeys
		}
		st.log.entries = append(st.log.entries, e)
	}
	return st.log, st.log.entries
}

// ChangeSet is what changed in an alias between two snapshots.
type ChangeSet struct {
	// IDs are the changed objects' namespace NUL name.
	IDs map[string]bool
	// Keys are their index keys, old and new values, at every prefix
	// length (the first k indexBy values joined by NUL).
	Keys map[string]bool
}

// Mark is the position of an alias in one snapshot, for a later
// [Snapshot.ChangesSince]. It keeps that snapshot's view of the alias
// alive.
type Mark struct{ view *aliasView }

// Mark returns the position of alias in s.
func (s *Snapshot) Mark(alias string) Mark {
	if s == nil {
		return Mark{}
	}
	return Mark{view: s.views[alias]}
}

// ChangesSince returns what changed in alias between the snapshot that
// gave m and s, when s was derived from it through views of one change
// log; ok is false otherwise (unrelated snapshots, a rebuild, a full log):
// then anything may have changed.
func (s *Snapshot) ChangesSince(alias string, m Mark) (cs ChangeSet, ok bool) {
	if s == nil || m.view == nil {
		return ChangeSet{}, false
	}
	cur, old := s.views[alias], m.view
	if cur == nil {
		return ChangeSet{}, false
	}
	if cur == old {
		return ChangeSet{}, true
	}
	if cur.log == nil || cur.log != old.log || len(old.logged) > len(cur.logged) {
		return ChangeSet{}, false
	}
	cs = ChangeSet{IDs: map[string]bool{}, Keys: map[string]bool{}}
	for _, e := range cur.logged[len(old.logged):] {
		cs.IDs[e.id] = true
		for _, k := range e.old {
			cs.Keys[k] = true
		}
		for _, k := range e.new {
			cs.Keys[k] = true
		}
	}
	return cs, true
}
