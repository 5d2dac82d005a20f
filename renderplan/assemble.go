package renderplan

import (
	"bytes"
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/cespare/xxhash/v2"
	"github.com/hashicorp/go-multierror"
)

// Piece is one part of haproxy.cfg handed to [NewOutput], in file order.
type Piece struct {
	Kind SectionKind
	// Name is the profile's or backend's name; empty for core pieces.
	Name string
	// Text is the piece's bytes. For core pieces it is taken verbatim
	// (adjacent core pieces merge into one section, empty ones vanish). For
	// profile pieces it is the profile's section, normally
	// [ProfileText](name, lines). For backend pieces it is empty or
	// [BackendText] of the backend: NewOutput renders backend sections itself.
	Text string
}

// ShapeReasonBody is the ShapeReason [NewOutput] gives a backend with body
// lines.
const ShapeReasonBody = "has body lines"

// NewOutput assembles an [Output] from already-rendered pieces: it is what the
// template assembler and the [Builder] call. It does not modify its
// arguments.
//
//   - haproxy.cfg is the concatenation of the pieces' texts; each piece
//     becomes a [Section] (adjacent core pieces merge) with its offset,
//     length and digest.
//   - Every profile and every backend appears in exactly one piece. A
//     profile's Digest is set from its piece's text. A backend's section is
//     [BackendText] of the backend; an empty Mode is taken from its profile;
//     its servers are sorted by name; a backend with Body lines is
//     [ShapeStructural] with [ShapeReasonBody], one without is
//     [ShapeDynamic] unless the caller marked it structural with a reason.
//   - Each map's file is generated with [MapText] at the map's path (kind
//     map, no reload); entries of unordered maps are sorted by key first.
//   - files are the cert, crtlist and general files. A map file may be
//     passed only if it is byte-identical to the generated one;
//     haproxy.cfg may not be passed. ReloadOnChange follows
//     [DefaultReloadOnChange] unless the FileContent overrides it. The
//     lines of a crt-list pass [CheckLines].
//   - opts set what haproxy.cfg declares beyond its text: [WithBufSize].
//
// Everything is sorted (profiles and backends by name, maps and files by
// path) and the result passes [Plan.Validate]; otherwise NewOutput returns
// every problem found, aggregated with go-multierror, and no output.
func NewOutput(pieces []Piece, profiles []Profile, backends []Backend, maps []Map, files []FileContent, opts ...Option) (*Output, error) {
	out, _, err := build(nil, pieces, profiles, backends, maps, files, optionsOf(opts))
	return out, err
}

// Option is an optional setting of [NewOutput].
type Option func(*options)

type options struct {
	bufSize int
}

// WithBufSize says haproxy.cfg sets tune.bufsize n: the plan's
// [Plan.BufSize]. Without it, or with 0, the plan declares none.
func WithBufSize(n int) Option { return func(o *options) { o.bufSize = n } }

func optionsOf(opts []Option) options {
	var o options
	for _, f := range opts {
		f(&o)
	}
	return o
}

// build is NewOutput, reusing what cache holds when it is not nil; then it
// also returns the parts from which the cache computes the output's ID.
func build(cache *Cache, pieces []Piece, profiles []Profile, backends []Backend, maps []Map, files []FileContent, o options) (_ *Output, parts cachedParts, _ error) {
	a := assembler{p: &Plan{Schema: Schema, BufSize: o.bufSize}, bePrev: -1, cache: cache, buf: &buffers{}}
	if cache != nil {
		a.buf = &cache.buf // Cache.NewOutput releases it
	}
	waitMaps := a.startMapFiles(maps)
	a.addProfiles(profiles)
	a.addBackends(backends)
	waitChecks := a.startBackendChecks()
	cfg := a.config(pieces)
	out := a.files(cfg, waitMaps(), files)

	p := a.p
	// Names and paths are unique in a valid plan, so an unstable sort is
	// deterministic there; duplicates make NewOutput fail anyway.
	sortFunc(out.Files, func(a, b FileContent) int { return cmp.Compare(a.Path, b.Path) })
	sortFunc(p.Files, func(a, b File) int { return cmp.Compare(a.Path, b.Path) })
	sortFunc(p.Profiles, func(a, b Profile) int { return cmp.Compare(a.Name, b.Name) })
	// p.Backends is in name order already (addBackends).
	sortFunc(p.Maps, func(a, b Map) int { return cmp.Compare(a.Path, b.Path) })
	normalizeTop(p) // addBackends normalized each backend
	out.Plan = p

	// The backend sections and map files were rendered from the backends
	// and maps above, so the validator need not render them again, and it
	// is told which backend each section holds.
	v := validator{sectionsRendered: true, sectionBackends: a.sectionBackends, mapsRendered: !a.mapsDup, backendsOrdered: a.beUnique,
		backendEntries: a.beEntries, buffers: a.buf}
	if cache != nil {
		v.mapEntries = cache.maps.m
	}
	v.planWith(p, waitChecks())
	a.buf.guids = v.guids[:0]
	a.errs = append(a.errs, v.problems()...)
	if len(a.errs) > 0 {
		return nil, parts, &multierror.Error{Errors: a.errs}
	}
	if cache != nil {
		parts = cachedParts{gen: cache.gen, backends: a.beEntries, sectionBackends: a.sectionBackends, maps: cache.maps.m, buf: &a.buf.enc}
	}
	return out, parts, nil
}

// assembler holds the plan NewOutput is building and the problems found.
type assembler struct {
	p       *Plan
	errs    []error
	profIdx map[string]int // profile name → index in p.Profiles
	// p.Backends is sorted by name from the start; these map between the
	// caller's order ("input index") and p.Backends ("position").
	beOrder []int // position → input index
	bePos   []int // input index → position
	beFirst []int // position → position of the first backend (in input order) of that name
	beNext  int   // input index after the last backend piece's: the next piece's likely backend
	bePrev  int   // position of the last backend piece's backend (-1 before the first)
	// beByName maps a name to a position of a backend of that name; it is
	// built once pieces have missed both guesses of backend a few times.
	beByName map[string]int
	beMisses int
	// sectionBackends holds, per section, the position of its backend
	// (-1 for other sections).
	sectionBackends []int
	// mapsDup says two maps have one path: then a map's file may be
	// another map's, and the validator must compare them.
	mapsDup bool
	// beUnique says no two backends have one name: p.Backends, in name
	// order, then has strictly increasing names.
	beUnique bool
	// modeProfile and mode are the last profile backendMode looked up
	// and its mode: backends usually share a few profiles.
	modeProfile, mode string
	modeFound         bool
	// cache, if not nil, holds what earlier builds derived; beEntries
	// holds, per position, the entry of the backend there.
	cache     *Cache
	beEntries []*backendEntry
	// buf holds the working slices: a cache's, or new ones.
	buf *buffers
}

func (a *assembler) fail(format string, args ...any) {
	a.errs = append(a.errs, fmt.Errorf(format, args...))
}

func (a *assembler) addProfiles(profiles []Profile) {
	a.p.Profiles = slices.Clone(profiles)
	a.profIdx = make(map[string]int, len(profiles))
	for i, pr := range a.p.Profiles {
		if _, dup := a.profIdx[pr.Name]; dup {
			a.fail("profile %s: declared twice", pr.Name)
			continue
		}
		a.profIdx[pr.Name] = i
	}
}

// addBackends copies the backends into p.Backends in name order, fills in
// mode and shape and sorts their servers.
//
// The order is the one sorting the copies with sortFunc would give, equal
// names included (see sortedOrder), but no Backend is moved more than
// once. Of backends with the same name the first in the caller's order is
// the one pieces refer to; the others are reported as declared twice, in
// the caller's order.
func (a *assembler) addBackends(backends []Backend) {
	names := scratch(&a.buf.names, len(backends))
	for i := range backends {
		names[i] = backends[i].Name
	}
	order := sortedOrderInto(scratch(&a.buf.order, len(names)), func(i, j int) int { return strings.Compare(names[i], names[j]) })
	a.p.Backends = make([]Backend, len(backends))
	a.beOrder = order
	a.bePos = scratch(&a.buf.bePos, len(backends))
	a.beFirst = scratch(&a.buf.beFirst, len(backends))
	var dups []int // input indices
	for run := 0; run < len(order); {
		end, first := run+1, run
		for end < len(order) && names[order[end]] == names[order[run]] {
			if order[end] < order[first] {
				first = end
			}
			end++
		}
		for k := run; k < end; k++ {
			a.beFirst[k] = first
			if k != first {
				dups = append(dups, order[k])
			}
		}
		run = end
	}
	a.beUnique = len(dups) == 0
	slices.Sort(dups)
	for _, i := range dups {
		a.fail("backend %s: declared twice", backends[i].Name)
	}

	for k, i := range order {
		a.bePos[i] = k
	}
	if a.cache != nil {
		a.addCachedBackends(backends)
		return
	}
	cp := newBackendCopier(backends)
	for k, i := range order {
		a.deriveBackend(&a.p.Backends[k], &backends[i], &cp)
	}
}

// deriveBackend sets *be to NewOutput's copy of the caller's *src: mode
// from the profile, shape, servers sorted, empty slices nil.
func (a *assembler) deriveBackend(be, src *Backend, cp *backendCopier) {
	cp.copy(be, src)
	be.Mode = a.backendMode(be)
	sortServers(be.Servers)
	switch {
	case len(be.Body) > 0:
		be.Shape, be.ShapeReason = ShapeStructural, ShapeReasonBody
	case be.Shape == ShapeStructural && be.ShapeReason != "":
		// Forced structural by the caller.
	default:
		be.Shape, be.ShapeReason = ShapeDynamic, ""
	}
	normalizeBackend(be)
}

// backendMode returns be's mode: its own, or its profile's if it has
// none.
func (a *assembler) backendMode(be *Backend) string {
	if be.Mode != "" {
		return be.Mode
	}
	if !a.modeFound || a.modeProfile != be.Profile {
		j, ok := a.profIdx[be.Profile]
		if !ok {
			return ""
		}
		a.modeProfile, a.mode, a.modeFound = be.Profile, a.p.Profiles[j].Mode, true
	}
	return a.mode
}

// addCachedBackends is the end of addBackends with a cache: backends the
// cache derived before are taken from it, the others derived and put in
// it.
func (a *assembler) addCachedBackends(backends []Backend) {
	t := &a.cache.backends
	a.beEntries = scratch(&a.buf.entries, len(backends))
	var size backendCopySize
	misses := 0
	// The entry of a backend's name is usually the one after the
	// previous backend's in the previous build's order (last): an entry
	// there that no other replaced is the cache's entry of its name.
	last, next := a.cache.last, 0
	for k, i := range a.beOrder {
		src := &backends[i]
		var e *backendEntry
		if next < len(last) && !last[next].gone && last[next].in.Name == src.Name {
			e = last[next]
			next++
		} else if found, ok := t.get(src.Name); ok {
			e = found
			if p := found.pos; p < len(last) && last[p] == found {
				next = p + 1
			}
		}
		if e != nil && e.matches(src, a.backendMode(src)) {
			t.use(e)
			e.pos = k
			a.beEntries[k] = e
			a.p.Backends[k] = e.be
			continue
		}
		size.add(src)
		misses++
	}
	if misses == 0 {
		return
	}
	cp := size.copier()
	for k, i := range a.beOrder {
		if a.beEntries[k] != nil {
			continue
		}
		be := &a.p.Backends[k]
		a.deriveBackend(be, &backends[i], &cp)
		e := &backendEntry{in: backends[i], be: *be, born: a.cache.gen, pos: k}
		a.cache.born++
		a.beEntries[k] = e
		if old, ok := t.get(be.Name); ok {
			old.gone = true
		}
		t.put(be.Name, e)
	}
}

// backend returns the position of the backend a piece of the given name
// refers to. Pieces usually come in the order of NewOutput's backends
// argument or in name order, so it tries the backend after the previous
// piece's in both orders before searching; after a few misses it looks
// names up in a map. Any backend of the name will do: all of one name
// share beFirst.
func (a *assembler) backend(name string) (int, bool) {
	bs := a.p.Backends
	var k int
	if i := a.beNext; i < len(a.bePos) && bs[a.bePos[i]].Name == name {
		k = a.bePos[i]
	} else if j := a.bePrev + 1; j < len(bs) && bs[j].Name == name {
		k = j
	} else {
		var ok bool
		if k, ok = a.findBackend(name); !ok {
			return 0, false
		}
	}
	a.beNext = a.beOrder[k] + 1
	a.bePrev = k
	return a.beFirst[k], true
}

// findBackend searches p.Backends (sorted by name) for a backend named
// name.
func (a *assembler) findBackend(name string) (int, bool) {
	if a.beByName == nil {
		if a.beMisses++; a.beMisses <= 16 {
			return slices.BinarySearchFunc(a.p.Backends, name, backendNamed)
		}
		a.beByName = make(map[string]int, len(a.p.Backends))
		for k := range a.p.Backends {
			a.beByName[a.p.Backends[k].Name] = k
		}
	}
	k, ok := a.beByName[name]
	return k, ok
}

// config concatenates the pieces into haproxy.cfg and records the
// sections.
func (a *assembler) config(pieces []Piece) []byte {
	p := a.p
	size := 0
	for _, pc := range pieces {
		size += len(pc.Text)
	}
	for i := range p.Backends {
		if e := a.entry(i); e != nil && e.text != "" {
			size += len(e.text)
		} else {
			size += backendTextSize(&p.Backends[i])
		}
	}
	cfg := make([]byte, 0, size)
	p.Sections = make([]Section, 0, len(pieces))
	a.sectionBackends = scratch(&a.buf.sectionBackends, len(pieces))[:0]
	profSeen := make([]bool, len(p.Profiles))
	beSeen := scratch(&a.buf.beSeen, len(p.Backends))
	for _, pc := range pieces {
		start := len(cfg)
		backend := -1 // position of the piece's backend
		switch pc.Kind {
		case SectionCore:
			if pc.Text == "" {
				continue
			}
			cfg = append(cfg, pc.Text...)
			if n := len(p.Sections); n > 0 && p.Sections[n-1].Kind == SectionCore {
				p.Sections[n-1].Length += len(pc.Text)
				continue
			}
		case SectionProfile:
			j, ok := a.profIdx[pc.Name]
			if !ok {
				a.fail("profile %s: piece without a profile", pc.Name)
				continue
			}
			if profSeen[j] {
				a.fail("profile %s: more than one piece", pc.Name)
				continue
			}
			profSeen[j] = true
			p.Profiles[j].Digest = DigestString(pc.Text)
			cfg = append(cfg, pc.Text...)
		case SectionBackend:
			j, ok := a.backend(pc.Name)
			if !ok {
				a.fail("backend %s: piece without a backend", pc.Name)
				continue
			}
			if beSeen[j] {
				a.fail("backend %s: more than one piece", pc.Name)
				continue
			}
			beSeen[j] = true
			backend = j
			if e := a.entry(j); e != nil && e.text != "" {
				cfg = append(cfg, e.text...)
			} else {
				cfg = appendBackendText(cfg, &p.Backends[j])
				if e != nil {
					e.text = string(cfg[start:])
				}
			}
			if pc.Text != "" && pc.Text != string(cfg[start:]) {
				a.fail("backend %s: piece text is not BackendText of the backend", pc.Name)
			}
		default:
			a.fail("piece %q: unknown section kind %q", pc.Name, pc.Kind)
			continue
		}
		if len(cfg) == start {
			a.fail("%s %s: empty piece", pc.Kind, pc.Name)
			continue
		}
		if start > 0 && pc.Kind != SectionCore && cfg[start-1] != '\n' {
			a.fail("%s %s: text before it does not end with a newline", pc.Kind, pc.Name)
		}
		name := pc.Name
		if pc.Kind == SectionCore {
			name = ""
		}
		p.Sections = append(p.Sections, Section{Kind: pc.Kind, Name: name, Offset: start, Length: len(cfg) - start})
		a.sectionBackends = append(a.sectionBackends, backend)
	}
	for j, seen := range profSeen {
		if !seen {
			a.fail("profile %s: no piece places it in %s", p.Profiles[j].Name, ConfigPath)
		}
	}
	for _, j := range a.bePos {
		if !beSeen[j] {
			a.fail("backend %s: no piece places it in %s", p.Backends[j].Name, ConfigPath)
		}
	}
	a.sectionDigests(cfg)
	return cfg
}

// sectionDigests sets the digests of the sections of cfg, taking those of
// backends from the cache when it has them, and putting them there when
// not.
func (a *assembler) sectionDigests(cfg []byte) {
	p := a.p
	sums := scratch(&a.buf.sums, len(p.Sections))[:0]
	for i := range p.Sections {
		s := &p.Sections[i]
		if e := a.sectionEntry(i); e != nil && e.digest != "" {
			s.Digest = e.digest
			continue
		}
		sums = append(sums, xxhash.Sum64(cfg[s.Offset:s.Offset+s.Length]))
	}
	digests := digestsOf(sums)
	for i := range p.Sections {
		s := &p.Sections[i]
		if s.Digest != "" {
			continue
		}
		s.Digest, digests = digests[0], digests[1:]
		if e := a.sectionEntry(i); e != nil {
			e.digest = s.Digest
		}
	}
}

// entry returns the cache entry of the backend at position k, nil if
// there is no cache.
func (a *assembler) entry(k int) *backendEntry {
	if a.beEntries == nil {
		return nil
	}
	return a.beEntries[k]
}

// sectionEntry returns the cache entry of the backend of section i, nil
// if it holds no backend or there is no cache.
func (a *assembler) sectionEntry(i int) *backendEntry {
	if k := a.sectionBackends[i]; k >= 0 {
		return a.entry(k)
	}
	return nil
}

// parallelBackends is the fewest backends for which a build checks them
// on another goroutine, beside the assembly of haproxy.cfg.
const parallelBackends = 1024

// startBackendChecks starts the validator's checks of the backends (see
// [validator.checkBackends]) and returns a function that waits for them:
// on another goroutine for a build of many backends, else on this one. They read p.Backends, which is complete, the profiles' names
// and modes, copied here (config sets their digests meanwhile), and the
// backends' cache entries, whose fields they use no other step of the
// build touches.
func (a *assembler) startBackendChecks() func() *backendChecks {
	v := validator{backendsOrdered: a.beUnique, backendEntries: a.beEntries, buffers: a.buf}
	profiles := profilesByName(slices.Clone(a.p.Profiles))
	if len(a.p.Backends) < parallelBackends {
		b := v.checkBackends(a.p, profiles)
		return func() *backendChecks { return b }
	}
	ch := make(chan *backendChecks, 1)
	go func() { ch <- v.checkBackends(a.p, profiles) }()
	return func() *backendChecks { return <-ch }
}

// mapFiles are the maps' part of an output: the plan's maps, their files
// and digests, and the problems found.
type mapFiles struct {
	maps    []Map
	files   []FileContent
	digests []Digest
	body    map[string][]byte // by path
	errs    []error
	dup     bool // two maps have one path
}

// parallelMapEntries is the fewest entries of changed maps for which a
// build generates the map files on another goroutine, beside the
// backends and haproxy.cfg: below it, waking a goroutine costs more than
// it saves.
const parallelMapEntries = 1024

// startMapFiles starts generating the map files and returns a function
// that waits for them: on another goroutine when the maps to generate
// (those that changed since a cache's last build) are big, else on this
// one. The map work
// touches only the cache's maps table and the runs buffer, which the
// backends' never do.
func (a *assembler) startMapFiles(maps []Map) func() *mapFiles {
	work := 0
	for _, m := range maps {
		if a.cache == nil {
			work += len(m.Entries)
		} else if c, ok := a.cache.maps.get(m.Path); !ok || c.ordered != m.Ordered || !sameSlice(c.in, m.Entries) {
			work += len(m.Entries)
		}
	}
	if work < parallelMapEntries {
		mf := a.mapFiles(maps)
		return func() *mapFiles { return mf }
	}
	ch := make(chan *mapFiles, 1)
	go func() { ch <- a.mapFiles(maps) }()
	return func() *mapFiles { return <-ch }
}

// mapFiles generates the maps' files (see [mapFiles]).
func (a *assembler) mapFiles(maps []Map) *mapFiles {
	mf := &mapFiles{
		maps:    make([]Map, len(maps)),
		files:   make([]FileContent, 0, len(maps)),
		digests: make([]Digest, 0, len(maps)),
		body:    make(map[string][]byte, len(maps)),
	}
	for i, m := range maps {
		// e is the cache's entry of the map if unchanged; old, that of
		// its previous version if changed, and runs match the entries
		// against old's.
		var e, old *mapEntry
		var runs []entryRun
		if a.cache != nil {
			if c, ok := a.cache.maps.get(m.Path); ok {
				if c.ordered == m.Ordered && sameSlice(c.in, m.Entries) {
					e = c
				} else {
					old = c
					runs = diffEntries(a.buf.runs[:0], old.entries, m.Entries)
					a.buf.runs = runs
				}
			}
		}
		in := m.Entries
		switch {
		case e != nil:
			m.Entries = e.entries
		case a.cache != nil && (m.Ordered || entriesSorted(m.Entries, old, runs)):
			// The caller does not modify what it passed (Cache), so
			// entries that need no sorting need no copy either.
			if len(m.Entries) == 0 {
				m.Entries = nil
			}
		default:
			if m.Ordered {
				m.Entries = slices.Clone(m.Entries)
			} else {
				m.Entries = sortedEntries(m.Entries)
			}
			if len(m.Entries) == 0 {
				m.Entries = nil
			}
			if old != nil {
				runs = diffEntries(a.buf.runs[:0], old.entries, m.Entries)
				a.buf.runs = runs
			}
		}
		mf.maps[i] = m
		if _, dup := mf.body[m.Path]; dup {
			mf.errs = append(mf.errs, fmt.Errorf("map %s: declared twice", m.Path))
			mf.dup = true
			continue
		}
		var body []byte
		var digest Digest
		switch {
		case e != nil:
			a.cache.maps.use(e)
			body, digest = e.body, e.digest
		case a.cache != nil:
			if old != nil {
				// A new version of a map: made from the previous one.
				body = mapTextFrom(old, m.Entries, runs)
			} else {
				body = MapText(m)
			}
			digest = DigestOf(body)
			made := &mapEntry{ordered: m.Ordered, in: in, entries: m.Entries, body: body, digest: digest, born: a.cache.gen}
			if old != nil {
				made.encodeFrom(&mf.maps[i], old, runs)
				if !m.Ordered && !old.ordered && old.checked && old.valid {
					made.prevValid, made.prevRuns = old.entries, slices.Clone(runs)
				}
			}
			a.cache.maps.put(m.Path, made)
		default:
			body = MapText(m)
			digest = DigestOf(body)
		}
		mf.body[m.Path] = body
		mf.files = append(mf.files, FileContent{Path: m.Path, Kind: FileMap, Body: body})
		mf.digests = append(mf.digests, digest)
	}
	return mf
}

// files records haproxy.cfg, the map files and the caller's files, in
// p.Files and in the returned output (unsorted).
func (a *assembler) files(cfg []byte, mf *mapFiles, files []FileContent) *Output {
	p := a.p
	a.errs = append(a.errs, mf.errs...)
	a.mapsDup = mf.dup
	p.Maps = mf.maps
	out := &Output{Files: make([]FileContent, 0, 1+len(mf.files)+len(files))}
	out.Files = append(out.Files, FileContent{Path: ConfigPath, Kind: FileConfig, Body: cfg})
	p.Files = append(p.Files, File{Path: ConfigPath, Kind: FileConfig, ReloadOnChange: true})
	// digests holds the digests of out.Files known already, "" for those
	// to compute.
	digests := make([]Digest, 1, cap(out.Files))
	for i, f := range mf.files {
		out.Files = append(out.Files, f)
		p.Files = append(p.Files, File{Path: f.Path, Kind: FileMap})
		digests = append(digests, mf.digests[i])
	}
	for _, f := range files {
		switch {
		case f.Path == ConfigPath || f.Kind == FileConfig:
			a.fail("file %s: %s is generated from the pieces; pass no config file", f.Path, ConfigPath)
			continue
		case f.Kind == FileMap:
			if body, ok := mf.body[f.Path]; !ok || !bytes.Equal(body, f.Body) {
				a.fail("file %s: map files are generated from the maps; pass it as a Map", f.Path)
			}
			continue
		}
		if f.Kind == FileCrtList {
			if err := CheckLines(f.Kind, f.Path, f.Body, p.BufSize); err != nil {
				a.fail("file %s: %v", f.Path, err)
			}
		}
		reload := DefaultReloadOnChange(f.Kind)
		if f.ReloadOnChange != nil {
			reload = *f.ReloadOnChange
		}
		f.Body = slices.Clone(f.Body)
		out.Files = append(out.Files, f)
		p.Files = append(p.Files, File{Path: f.Path, Kind: f.Kind, ReloadOnChange: reload})
		digests = append(digests, "")
	}
	for i := range out.Files {
		if digests[i] == "" {
			digests[i] = DigestOf(out.Files[i].Body)
		}
		p.Files[i].Digest = digests[i]
		p.Files[i].Size = len(out.Files[i].Body)
	}
	return out
}

// sortServers sorts by name; servers of one name (invalid) by the rest of
// their fields, so the order never depends on the caller's.
func sortServers(s []Server) {
	if namesIncrease(s) {
		return // sorted whatever the other fields hold
	}
	sortFunc(s, func(a, b Server) int {
		if c := strings.Compare(a.Name, b.Name); c != 0 {
			return c
		}
		return cmp.Or(cmp.Compare(a.Address, b.Address), cmp.Compare(a.Port, b.Port), cmp.Compare(a.Weight, b.Weight),
			cmp.Compare(strings.Join(a.Keywords, " "), strings.Join(b.Keywords, " ")))
	})
}

// namesIncrease reports whether the servers' names are strictly
// increasing.
func namesIncrease(s []Server) bool {
	for i := 1; i < len(s); i++ {
		if s[i-1].Name >= s[i].Name {
			return false
		}
	}
	return true
}
