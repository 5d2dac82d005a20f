package templating

import (
	"cmp"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"unsafe"

	"github.com/haptic-io/haptic/renderplan"
)

// A render after one object changed replays thousands of renderEach items
// whose effects are the same as last time. Replaying them one by one into
// fresh maps, registries and backend lists costs time linear in the items;
// a segment makes it linear in the items that changed.
//
// A segment is what one renderEach call's items did, folded: for every map
// key, registry key and backend, the items' writes in render order (the
// first one wins, as in a sequential render). The engine keeps each call's
// segment from one render to the next; the same call in the next render
// removes the writes of the items that went and adds those of the items
// that came, and hands the folded result to the render ("adopts" it) when
// the render had not written those maps, registries and backends before
// the call, which is when the fold equals a sequential replay. Otherwise,
// or when a fold cannot stand for the items (two items record the same
// backend name or guid, an item writes an ordered map), the render replays
// the items as before. Items listed twice or out of their old order are
// executed anew (eachmemo.go's matcher), so a fold never meets them.

// segBulk is the number of item changes above which a segment re-sorts its
// maps and backends once instead of inserting one by one.
const segBulk = 64

// writer is one write of a segment: op of res.
type writer struct {
	res *eachResult
	op  int32
}

// before reports whether w comes before v in the list order.
func (w writer) before(v writer) bool {
	if w.res != v.res {
		return w.res.ord < v.res.ord
	}
	return w.op < v.op
}

func (w writer) memo() *memoOp { return &w.res.ops[w.op] }

// writers are a key's writes in render order; first wins.
type writers struct {
	first writer
	more  []writer
}

func (ws *writers) add(w writer) {
	if w.before(ws.first) {
		ws.more = slices.Insert(ws.more, 0, ws.first)
		ws.first = w
		return
	}
	i := len(ws.more)
	for i > 0 && w.before(ws.more[i-1]) {
		i--
	}
	ws.more = slices.Insert(ws.more, i, w)
}

// remove removes w and reports whether no write is left.
func (ws *writers) remove(w writer) (empty bool) {
	if ws.first == w {
		if len(ws.more) == 0 {
			return true
		}
		ws.first = ws.more[0]
		ws.more = slices.Delete(ws.more, 0, 1)
	} else if i := slices.Index(ws.more, w); i >= 0 {
		ws.more = slices.Delete(ws.more, i, i+1)
	}
	if len(ws.more) == 0 {
		ws.more = nil
	}
	return false
}

// segment is one renderEach call of a render: its items' results in list
// order (the next render's same call replays them, eachmemo.go), what
// lets that call skip checking them one by one, its output, and their
// fold. The slices are dense so that a render walks them without loading
// every result.
type segment struct {
	snippet string
	depth   int
	// bufSize is the tune.bufsize its results were checked against
	// (bounds.go).
	bufSize int
	results []*eachResult
	keys    []unsafe.Pointer // the items' identities (results[i].key)
	// out is the call's output; offs[i] is where results[i]'s part starts
	// (offs has one more element: len(out)).
	out  string
	offs []int
	// reads are the cacheGet keys any result read, with the fingerprint
	// each had in the last render: when none changed, no result's reads
	// need checking. maps are the maps any result wrote. bySvc are the
	// results whose backends' servers came from a Service (namespace NUL
	// name): when the store tells what changed, only theirs are checked.
	// reads and maps may name keys no result reads any more.
	reads map[string]uint64
	maps  map[string]struct{}
	bySvc map[string][]*eachResult
	// fold is nil when the results have none; skipFold: folding failed
	// last render, so this render goes without, and the next tries again.
	fold     *segFold
	skipFold bool
}

// segFold is the folded effects of a segment's results (see above).
type segFold struct {
	maps map[string]*segMap
	regs map[string]*segReg
	bes  segBackends
	// static are the results with problems of their own.
	static map[*eachResult]struct{}
	// broken: the fold cannot stand for the results (see above).
	broken bool
	// bulk: too many changes to keep the sorted views sorted one by one;
	// update sorts them at the end.
	bulk bool
}

// segMap is the entries a segment wrote to one map.
type segMap struct {
	name  string
	keys  map[string]writers
	multi map[string]struct{} // keys written more than once
	// sorted are the winning entries by key; shared once an Output holds
	// them (then the next change copies first).
	sorted []renderplan.MapEntry
	shared bool
}

// segReg is the claims a segment made in one registry.
type segReg struct {
	keys map[string]writers
	reg  map[string]any // the winners: what claimed returns
	// sorted are reg's keys in order and vals their values (keys and
	// values of the adopted registry need no sort or lookup); shared once
	// a render holds them.
	sorted []string
	vals   []any
	shared bool
}

// segBackends is the backends a segment recorded.
type segBackends struct {
	byName    map[string]*segBackend // accepted backends
	guidOwner map[string]string      // their guids → names
	names     map[string]struct{}    // names past the name check (accepted or not)
	guids     map[string]struct{}    // guids past the guid check
	sorted    []*segBackend          // accepted, by name
	profiles  map[string]*profileUse
	servers   map[serversKey]*serversUse
	// troubled are the servers with problems (a render reports them).
	troubled map[serversKey]*serversUse
}

type segBackend struct {
	w      writer
	be     renderplan.Backend
	placed uint64 // the assembly that found its token
}

type profileUse struct {
	lines []string
	n     int
}

type serversUse struct {
	e *serversEntry
	n int
}

// ordGap spaces the ords of a list numbered anew.
const ordGap = 1 << 32

// update makes the fold stand for the call's results R, given the results
// that went (removed) and the positions in R of those that came (added,
// increasing); every other result of R was in the old list, in the same
// relative order. It reports whether the fold stands for R; when not, the
// fold is dropped.
func (seg *segment) update(r *renderState, R []*eachResult, removed []*eachResult, added []int) bool {
	if seg.fold == nil {
		seg.fold = &segFold{maps: map[string]*segMap{}, regs: map[string]*segReg{}, static: map[*eachResult]struct{}{}}
		removed, added = nil, allPositions(len(R))
	}
	s := seg.fold
	s.bulk = len(removed)+len(added) > segBulk
	for _, p := range removed {
		s.apply(r, p, false)
	}
	assignOrds(R, added)
	for _, i := range added {
		s.apply(r, R[i], true)
	}
	if s.broken {
		seg.fold, seg.skipFold = nil, true
		return false
	}
	if s.bulk {
		s.sortAll()
	}
	return true
}

func allPositions(n int) []int {
	all := make([]int, n)
	for i := range all {
		all[i] = i
	}
	return all
}

// assignOrds gives the results at the added positions of R ords between
// their neighbours', numbering the whole list anew when there is no room.
// Added positions come in runs of consecutive ones; each run is spread
// evenly between the kept results around it.
func assignOrds(R []*eachResult, added []int) {
	for k := 0; k < len(added); {
		first := added[k]
		end := k + 1
		for end < len(added) && added[end] == added[end-1]+1 {
			end++
		}
		n := uint64(end - k) // the run is R[first : first+n]
		lo := uint64(0)
		if first > 0 {
			lo = R[first-1].ord
		}
		hi := lo + (n+1)*ordGap
		if last := first + int(n); last < len(R) {
			hi = R[last].ord
		}
		step := (hi - lo) / (n + 1)
		if hi <= lo || step == 0 {
			for i, x := range R {
				x.ord = uint64(i+1) * ordGap
			}
			return
		}
		for i := range n {
			R[first+int(i)].ord = lo + (i+1)*step
		}
		k = end
	}
}

// apply adds (or removes) the effects of res.
func (s *segFold) apply(r *renderState, res *eachResult, add bool) {
	if len(res.static) > 0 {
		if add {
			s.static[res] = struct{}{}
		} else {
			delete(s.static, res)
		}
	}
	for i := range res.ops {
		op := &res.ops[i]
		w := writer{res: res, op: int32(i)}
		switch op.kind {
		case opMapEntry:
			if op.invalid != "" {
				continue // a problem of the item alone
			}
			if m := r.mapsByKey[op.mapName]; m == nil || m.ordered {
				s.broken = true // order matters there: replay
				continue
			}
			sm := s.maps[op.mapName]
			if sm == nil {
				sm = &segMap{name: op.mapName, keys: map[string]writers{}, multi: map[string]struct{}{}}
				s.maps[op.mapName] = sm
			}
			if add {
				sm.add(op.a, w, s.bulk)
			} else {
				sm.remove(op.a, w, s.bulk)
			}
		case opClaim:
			sr := s.regs[op.a]
			if sr == nil {
				sr = &segReg{keys: map[string]writers{}, reg: map[string]any{}}
				s.regs[op.a] = sr
			}
			if add {
				sr.add(op.b, w, s.bulk)
			} else {
				sr.remove(op.b, w, s.bulk)
			}
		case opBackend:
			if add {
				s.bes.add(w, s)
			} else {
				s.bes.remove(w, s)
			}
		}
	}
}

// own copies sorted before a change once a render holds it.
func (sr *segReg) own() {
	if sr.shared {
		sr.sorted = slices.Grow(slices.Clone(sr.sorted), 16)
		sr.vals = slices.Grow(slices.Clone(sr.vals), 16)
		sr.shared = false
	}
}

func (sm *segMap) value(w writer) string { return w.memo().b }

func (sm *segMap) add(k string, w writer, bulk bool) {
	ws, ok := sm.keys[k]
	if !ok {
		sm.keys[k] = writers{first: w}
		if !bulk {
			sm.own()
			i, _ := sm.find(k)
			sm.sorted = slices.Insert(sm.sorted, i, renderplan.MapEntry{Key: k, Value: sm.value(w)})
		}
		return
	}
	win := ws.first
	ws.add(w)
	sm.keys[k] = ws
	sm.multi[k] = struct{}{}
	if ws.first != win && !bulk {
		sm.set(k, sm.value(ws.first))
	}
}

func (sm *segMap) remove(k string, w writer, bulk bool) {
	ws := sm.keys[k]
	win := ws.first
	if ws.remove(w) {
		delete(sm.keys, k)
		delete(sm.multi, k)
		if !bulk {
			sm.own()
			if i, ok := sm.find(k); ok {
				sm.sorted = slices.Delete(sm.sorted, i, i+1)
			}
		}
		return
	}
	sm.keys[k] = ws
	if ws.more == nil {
		delete(sm.multi, k)
	}
	if ws.first != win && !bulk {
		sm.set(k, sm.value(ws.first))
	}
}

func (sm *segMap) find(k string) (int, bool) {
	return slices.BinarySearchFunc(sm.sorted, k, func(e renderplan.MapEntry, k string) int { return cmp.Compare(e.Key, k) })
}

func (sm *segMap) set(k, v string) {
	i, ok := sm.find(k)
	if !ok || sm.sorted[i].Value == v {
		return
	}
	sm.own()
	sm.sorted[i].Value = v
}

// own copies sorted before a change once an Output holds it.
func (sm *segMap) own() {
	if sm.shared {
		sm.sorted = slices.Grow(slices.Clone(sm.sorted), 16)
		sm.shared = false
	}
}

// winner returns the value the segment's first write of k gave.
func (sm *segMap) winner(k string) (string, bool) {
	ws, ok := sm.keys[k]
	if !ok {
		return "", false
	}
	return sm.value(ws.first), true
}

// conflicts appends the MapKeyConflict problems of the keys written more
// than once, as a sequential render reports them.
func (sm *segMap) conflicts(ps []Problem) []Problem {
	for k := range sm.multi {
		ws := sm.keys[k]
		win := sm.value(ws.first)
		for _, w := range ws.more {
			if v := sm.value(w); v != win {
				ps = append(ps, Problem{Object: w.memo().c, Reason: ReasonMapKeyConflict,
					Message: fmt.Sprintf("map %s: key %q already maps to %q; %q ignored", sm.name, k, win, v)})
			}
		}
	}
	return ps
}

func (sr *segReg) add(k string, w writer, bulk bool) {
	ws, ok := sr.keys[k]
	if !ok {
		sr.keys[k] = writers{first: w}
		v := w.memo().val
		sr.reg[k] = v
		if !bulk {
			sr.own()
			i, _ := slices.BinarySearch(sr.sorted, k)
			sr.sorted = slices.Insert(sr.sorted, i, k)
			sr.vals = slices.Insert(sr.vals, i, v)
		}
		return
	}
	win := ws.first
	ws.add(w)
	sr.keys[k] = ws
	sr.reg[k] = ws.first.memo().val
	if ws.first != win && !bulk {
		sr.set(k, ws.first.memo().val)
	}
}

func (sr *segReg) remove(k string, w writer, bulk bool) {
	ws := sr.keys[k]
	win := ws.first
	if ws.remove(w) {
		delete(sr.keys, k)
		delete(sr.reg, k)
		if !bulk {
			sr.own()
			if i, ok := slices.BinarySearch(sr.sorted, k); ok {
				sr.sorted = slices.Delete(sr.sorted, i, i+1)
				sr.vals = slices.Delete(sr.vals, i, i+1)
			}
		}
		return
	}
	sr.keys[k] = ws
	sr.reg[k] = ws.first.memo().val
	if ws.first != win && !bulk {
		sr.set(k, ws.first.memo().val)
	}
}

// set makes v the value of k in vals, after its first writer changed.
func (sr *segReg) set(k string, v any) {
	if i, ok := slices.BinarySearch(sr.sorted, k); ok {
		sr.own()
		sr.vals[i] = v
	}
}

// add records a backend call as addBackend would, or breaks the segment
// where the outcome depends on the order of calls.
func (b *segBackends) add(w writer, s *segFold) {
	p := w.memo().be
	if b.byName == nil {
		b.byName = map[string]*segBackend{}
		b.guidOwner = map[string]string{}
		b.names = map[string]struct{}{}
		b.guids = map[string]struct{}{}
		b.profiles = map[string]*profileUse{}
		b.servers = map[serversKey]*serversUse{}
		b.troubled = map[serversKey]*serversUse{}
	}
	if p.svcKey != nil {
		if u := b.servers[*p.svcKey]; u != nil {
			u.n++
		} else {
			u = &serversUse{e: p.svc, n: 1}
			b.servers[*p.svcKey] = u
			if len(p.svc.problems) > 0 {
				b.troubled[*p.svcKey] = u
			}
		}
	}
	if p.nameBad != "" {
		return
	}
	if _, dup := b.names[p.name]; dup {
		s.broken = true // a duplicate name is an error, or not, by order
		return
	}
	b.names[p.name] = struct{}{}
	if p.guidBad != "" {
		return
	}
	if _, dup := b.guids[p.guid]; dup {
		s.broken = true // the first recorder of a guid wins
		return
	}
	b.guids[p.guid] = struct{}{}
	if p.profileErr != nil {
		s.broken = true // the render fails: replay says how
		return
	}
	if p.linesBad != "" {
		return
	}
	sb := &segBackend{w: w, be: renderplan.Backend{
		Name: p.name, GUID: p.guid, Profile: p.profile.name, Mode: p.mode, Body: p.body, Servers: p.servers,
	}}
	b.byName[p.name] = sb
	b.guidOwner[p.guid] = p.name
	if u := b.profiles[p.profile.name]; u != nil {
		u.n++
	} else {
		b.profiles[p.profile.name] = &profileUse{lines: p.profile.lines, n: 1}
	}
	if !s.bulk {
		i, _ := slices.BinarySearchFunc(b.sorted, p.name, bySegName)
		b.sorted = slices.Insert(b.sorted, i, sb)
	}
}

func (b *segBackends) remove(w writer, s *segFold) {
	p := w.memo().be
	if p.svcKey != nil {
		if u := b.servers[*p.svcKey]; u != nil {
			if u.n--; u.n == 0 {
				delete(b.servers, *p.svcKey)
				delete(b.troubled, *p.svcKey)
			}
		}
	}
	if p.nameBad != "" {
		return
	}
	delete(b.names, p.name)
	if p.guidBad != "" {
		return
	}
	delete(b.guids, p.guid)
	sb := b.byName[p.name]
	if sb == nil || sb.w != w {
		return // refused: no backend of its own
	}
	delete(b.byName, p.name)
	delete(b.guidOwner, p.guid)
	if u := b.profiles[p.profile.name]; u != nil {
		if u.n--; u.n == 0 {
			delete(b.profiles, p.profile.name)
		}
	}
	if !s.bulk {
		if i, ok := slices.BinarySearchFunc(b.sorted, p.name, bySegName); ok {
			b.sorted = slices.Delete(b.sorted, i, i+1)
		}
	}
}

func bySegName(sb *segBackend, name string) int { return cmp.Compare(sb.be.Name, name) }

// sortAll rebuilds the sorted views after a bulk update.
func (s *segFold) sortAll() {
	for _, sm := range s.maps {
		sorted := make([]renderplan.MapEntry, 0, len(sm.keys)+16)
		for k, ws := range sm.keys {
			sorted = append(sorted, renderplan.MapEntry{Key: k, Value: sm.value(ws.first)})
		}
		slices.SortFunc(sorted, func(a, b renderplan.MapEntry) int { return cmp.Compare(a.Key, b.Key) })
		sm.sorted, sm.shared = sorted, false
	}
	for _, sr := range s.regs {
		sr.sorted = make([]string, 0, len(sr.keys)+16)
		for k := range sr.keys {
			sr.sorted = append(sr.sorted, k)
		}
		slices.Sort(sr.sorted)
		sr.vals = make([]any, len(sr.sorted), cap(sr.sorted))
		for i, k := range sr.sorted {
			sr.vals[i] = sr.reg[k]
		}
		sr.shared = false
	}
	b := &s.bes
	b.sorted = slices.Grow(b.sorted[:0], len(b.byName))
	for _, sb := range b.byName {
		b.sorted = append(b.sorted, sb)
	}
	slices.SortFunc(b.sorted, func(x, y *segBackend) int { return cmp.Compare(x.be.Name, y.be.Name) })
	s.bulk = false
}

// adoptable reports whether the render had written nothing, before this
// call, that s's writes would meet: then s's fold is what replaying its
// items would record.
func (r *renderState) adoptable(s *segFold) bool {
	for name, sm := range s.maps {
		if len(sm.keys) == 0 {
			continue
		}
		m := r.mapsByKey[name]
		if m == nil || m.ordered || len(m.entries) > 0 || m.seg != nil {
			return false
		}
	}
	for name, sr := range s.regs {
		if len(sr.reg) > 0 && len(r.registries[name]) > 0 {
			return false
		}
	}
	if len(s.bes.byName) > 0 || len(s.bes.names) > 0 {
		if r.segBackends != nil {
			return false
		}
		for i := range r.backends {
			if _, dup := s.bes.names[r.backends[i].Name]; dup {
				return false
			}
			if _, dup := s.bes.guids[r.backends[i].GUID]; dup {
				return false
			}
		}
	}
	return true
}

// adopt records s's fold in the render, as replaying R would.
func (r *renderState) adopt(s *segFold) {
	for name, sm := range s.maps {
		if len(sm.keys) > 0 {
			r.mapsByKey[name].seg = sm
			r.problems = sm.conflicts(r.problems)
		}
	}
	for name, sr := range s.regs {
		if len(sr.reg) == 0 {
			continue
		}
		if reg := r.registries[name]; reg != nil {
			maps.Copy(reg, sr.reg) // a template may hold the (empty) registry
		} else {
			reg = maps.Clone(sr.reg)
			r.registries[name] = reg
			r.adopted[reflect.ValueOf(reg).UnsafePointer()] = sortedRegistry{sr.sorted, sr.vals}
			sr.shared = true
		}
		if r.frozen != nil {
			for _, v := range sr.reg {
				freeze(r.frozen, v)
			}
		}
	}
	b := &s.bes
	if len(b.names) > 0 || len(b.servers) > 0 {
		r.segBackends = b
		for name, u := range b.profiles {
			if _, ok := r.profiles[name]; !ok {
				r.profiles[name] = u.lines
			}
		}
		for _, u := range b.troubled {
			r.problems = append(r.problems, u.e.problems...)
		}
	}
	for res := range s.static {
		r.problems = append(r.problems, res.static...)
	}
}

// staticProblems are the problems an item's effects cause whatever the
// other items did (see addBackend for the backend checks' order).
func staticProblems(ops []memoOp) []Problem {
	var ps []Problem
	for i := range ops {
		op := &ops[i]
		switch op.kind {
		case opProblem:
			ps = append(ps, Problem{Object: op.a, Reason: op.b, Message: op.c})
		case opMapEntry:
			if op.invalid != "" {
				ps = append(ps, Problem{Object: op.c, Reason: op.invalidReason, Message: op.invalid})
			}
		case opBackend:
			p := op.be
			switch {
			case p.nameBad != "":
				ps = append(ps, Problem{Object: p.object, Reason: ReasonBackendInvalid, Message: p.nameBad})
			case p.guidBad != "":
				ps = append(ps, Problem{Object: p.object, Reason: ReasonBackendInvalid, Message: p.guidBad})
			case p.profileErr != nil:
			case p.linesBad != "":
				ps = append(ps, Problem{Object: p.object, Reason: ReasonBackendInvalid, Message: p.linesBad})
			default:
				ps = append(ps, p.serverProblems...)
			}
		}
	}
	return ps
}
