package renderplan

import "slices"

// Cache builds outputs like [NewOutput], reusing what it derived from
// the backends and maps of its previous build that come back unchanged:
// a controller renders every few seconds, and between two renders almost
// every backend and map is the same. The zero value is ready to use. A
// Cache is not safe for concurrent use: one build at a time.
//
// [Cache.NewOutput] returns exactly what NewOutput returns for the same
// arguments (byte-identical files, the same plan and ID, the same
// errors); only the work differs. Per backend it remembers, by name, the
// value it was given and what NewOutput derives from it: the copy with its
// mode, shape and sorted servers, its section text and digest, and
// whether it passed the checks of [Plan.Validate] that concern it alone.
// Per map it remembers, by path, the entries it was given and the sorted
// ones of the plan, map file and digest, and whether the entries were
// valid. A backend or map is reused when the new one is identical:
// strings and other values compare by value, slices (Body, Servers,
// Entries) by identity, that is the same backing array and length;
// backends are found by walking the previous build's in name order,
// looking a name up only where that walk misses. A changed map's file and
// encoding are made from its previous version's, copying the bytes of
// the entries found again in runs and rendering only the others; only
// those others are checked, and only entries that do not follow each
// other in the previous version are compared for order. A built output
// has its ID computed in the background as soon as it is built
// ([Output.ID] waits for it): the cache keeps the parts of the plan's
// encoding of the backends and maps it reuses, and hashes them instead of
// encoding them again. Whatever a build did not use is
// forgotten, so the cache holds one build's worth (about the size of the
// plan's encoding besides the output itself, plus a spare encoding
// buffer per map that changes), and the working slices of a build are
// kept for the next. After many builds that each bring a few new
// backends, [Cache.Compact] puts the entries back next to each other.
//
// Comparing slices by identity makes the caller promise what an
// immutable [Output] asks anyway: a slice passed to Cache.NewOutput (a
// backend's Body and Servers, the Keywords of its servers, a map's
// Entries) is never modified afterwards, by anyone. Pass a changed
// backend or map in a new slice.
//
// Outputs built by one cache share memory with each other and with the
// caller: an unchanged backend's servers, an unchanged map's entries and
// file body are the same in the output of each build, and a map's
// entries that were passed in order (or an ordered map's) are the
// caller's slice itself. Outputs are immutable, so that is safe for
// readers; it is one more reason never to modify an output (clone its
// plan with [Plan.Clone] to derive a changed one).
type Cache struct {
	gen      uint64 // the current build, counted from 1
	backends cacheTable[*backendEntry]
	maps     cacheTable[*mapEntry]
	// last holds the backend entries of the latest build by position:
	// the next build finds most of its backends by walking it in step
	// instead of looking each up by name.
	last []*backendEntry
	buf  buffers
	// idDone is closed once the ID of the latest build's output is
	// computed (startID); nil when none is being computed.
	idDone chan struct{}
	// born counts the backend entries made since the last Compact.
	born int
	// bufSize is the [WithBufSize] of the builds the entries come from.
	bufSize int
}

// NewOutput is [NewOutput] with reuse: see [Cache].
func (c *Cache) NewOutput(pieces []Piece, profiles []Profile, backends []Backend, maps []Map, files []FileContent, opts ...Option) (*Output, error) {
	if c.idDone != nil {
		<-c.idDone // the last output's ID reads the cache
		c.idDone = nil
	}
	o := optionsOf(opts)
	if o.bufSize != c.bufSize {
		// The map entries' verdicts hold for the last build's bufSize.
		*c = Cache{bufSize: o.bufSize}
	}
	c.gen++
	c.backends.begin(c.gen)
	c.maps.begin(c.gen)
	out, parts, err := build(c, pieces, profiles, backends, maps, files, o)
	c.backends.end()
	c.maps.end()
	// The build's entries by position become last; the previous last's
	// array becomes the next build's working slice, cleared by release.
	c.last, c.buf.entries = c.buf.entries, c.last
	c.buf.release()
	if out != nil {
		c.startID(out, parts)
	}
	return out, err
}

// startID computes out's ID in the background: a caller that has other
// work to do before it needs the ID (the diff, say) does it meanwhile,
// on another core. The computation reads the plan and the cache's
// entries and scratch encoding buffer, so the next build waits for it.
func (c *Cache) startID(out *Output, parts cachedParts) {
	done := make(chan struct{})
	out.idDone, c.idDone = done, done
	go func() {
		defer close(done)
		id := out.Plan.id(parts)
		out.id.Store(&id)
	}()
}

// backendEntry is what a Cache remembers of one backend.
type backendEntry struct {
	in Backend // the caller's value: its slices are compared by identity
	be Backend // the copy NewOutput derives: mode, shape, sorted servers, normalized
	// text and digest are be's section, enc its part of the plan's
	// encoding; empty until computed.
	text   string
	digest Digest
	enc    []byte
	// sec is the encoding of the backend's section, but for its offset,
	// which goes at secOffset.
	sec       []byte
	secOffset int
	born      uint64 // the build that made the entry
	// pos is the entry's position in the latest build that used it;
	// gone says another entry of its name replaced it in the cache.
	pos  int
	gone bool
	// checked says the validator checked be; valid, that be passed every
	// check about itself alone (names, guids, mode, shape, body lines,
	// servers). serverGUIDs are the guids its servers use, for the checks
	// across backends.
	checked, valid bool
	serverGUIDs    []serverGUID
	entryStamp
}

// serverGUID is a guid used by server j of a backend.
type serverGUID struct {
	guid string
	j    int
}

// matches reports whether the caller's backend in, whose mode is mode
// after filling it from its profile, derives e.be.
func (e *backendEntry) matches(in *Backend, mode string) bool {
	return e.in.Name == in.Name && e.in.GUID == in.GUID && e.in.Profile == in.Profile &&
		e.in.Mode == in.Mode && e.in.Shape == in.Shape && e.in.ShapeReason == in.ShapeReason &&
		e.be.Mode == mode && sameSlice(e.in.Body, in.Body) && sameSlice(e.in.Servers, in.Servers)
}

// mapEntry is what a Cache remembers of one map.
type mapEntry struct {
	ordered bool
	in      []MapEntry // the caller's entries, compared by identity
	entries []MapEntry // the entries NewOutput derives: sorted or copied, nil if none
	body    []byte     // MapText
	digest  Digest
	enc     []byte // the map's part of the plan's encoding, nil until computed
	// encStarts are where the entries' objects start in enc (encodeMap).
	encStarts []int
	// spareEnc and spareStarts are buffers for the encoding of the map's
	// next version (encodeFrom).
	spareEnc    []byte
	spareStarts []int
	born        uint64 // the build that made the entry
	// checked says the validator checked entries; valid, that they
	// passed. Until then, prevValid holds the entries of the map's
	// previous version if they passed (both unordered, so sorted): the
	// validator checks only the keys and values not among them.
	// prevRuns are the runs of entries against prevValid (diffEntries),
	// when prevValid is set.
	checked, valid bool
	prevValid      []MapEntry
	prevRuns       []entryRun
	entryStamp
}

// sameSlice reports whether a and b are the same slice: the same length
// and, unless empty, the same first element. Empty slices are all the
// same: NewOutput derives the same from nil and from empty ones.
func sameSlice[E any](a, b []E) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// cacheTable holds a cache's entries by name and forgets, at the end of
// a build, those the build did not use. Marking is by build number, so a
// build that uses every entry (the usual case) forgets nothing and scans
// nothing.
type cacheTable[P interface{ stamp() *uint64 }] struct {
	m    map[string]P
	gen  uint64
	used int // entries of m used by the current build
}

// entryStamp is the build that last used a cache entry.
type entryStamp struct{ used uint64 }

func (s *entryStamp) stamp() *uint64 { return &s.used }

func (t *cacheTable[P]) begin(gen uint64) { t.gen, t.used = gen, 0 }

// get returns the entry named name.
func (t *cacheTable[P]) get(name string) (P, bool) {
	e, ok := t.m[name]
	return e, ok
}

// use marks e, the entry named by its name, used by the current build.
func (t *cacheTable[P]) use(e P) {
	if u := e.stamp(); *u != t.gen {
		*u = t.gen
		t.used++
	}
}

// put stores e under name, replacing any entry of that name, and marks
// it used.
func (t *cacheTable[P]) put(name string, e P) {
	if t.m == nil {
		t.m = make(map[string]P)
	}
	if old, ok := t.m[name]; !ok || *old.stamp() != t.gen {
		t.used++
	}
	*e.stamp() = t.gen
	t.m[name] = e
}

// end forgets the entries the build did not use.
func (t *cacheTable[P]) end() {
	if t.used == len(t.m) {
		return
	}
	for name, e := range t.m {
		if *e.stamp() != t.gen {
			delete(t.m, name)
		}
	}
}

// buffers are the working slices of one build, none of which reaches its
// output: a Cache keeps them for the next build, so that a build of
// thousands of backends does not allocate them again.
type buffers struct {
	names                                  []string
	order, bePos, beFirst, sectionBackends []int
	beSeen, placed                         []bool
	entries                                []*backendEntry
	guids                                  []guidUse
	sums                                   []uint64
	runs                                   []entryRun
	enc                                    []byte
}

// scratch returns (*s)[:n] cleared, growing *s first if needed, with
// room to spare: builds grow a few backends at a time.
func scratch[T any](s *[]T, n int) []T {
	if cap(*s) < n {
		spare := 0
		if *s != nil {
			spare = n / 8
		}
		*s = make([]T, n, n+spare)
	}
	*s = (*s)[:n]
	clear(*s)
	return *s
}

// release clears the buffers that hold pointers, so that they do not keep
// what the build saw alive until the next build.
func (b *buffers) release() {
	clear(b.names[:cap(b.names)])
	clear(b.entries[:cap(b.entries)])
	clear(b.guids[:cap(b.guids)])
}

// cachedParts gives a plan's encoder the encodings of the backends and
// maps a Cache holds. It encodes and keeps those of entries made by
// an earlier build: an entry used a second time will likely be used
// again, while a new one (a changed map, say) may not be; a new entry's
// part is encoded in the stream, as without a cache.
type cachedParts struct {
	gen             uint64          // the current build
	backends        []*backendEntry // by position in the plan
	sectionBackends []int           // by section: the position of its backend, or -1
	maps            map[string]*mapEntry
	buf             *[]byte // scratch for encoding
}

// section: a backend's section has the kind, name, length and digest its
// backend gives it; only its offset changes from build to build.
func (c cachedParts) section(i int, s *Section) (head, tail []byte) {
	k := c.sectionBackends[i]
	if k < 0 {
		return nil, nil
	}
	e := c.backends[k]
	if e == nil || (e.sec == nil && e.born == c.gen) {
		return nil, nil
	}
	if e.sec == nil {
		enc := encoder{buf: (*c.buf)[:0]}
		enc.sectionHead(s)
		n := len(enc.buf)
		enc.sectionTail(s)
		e.sec, e.secOffset = slices.Clone(enc.buf), n
		*c.buf = enc.buf
	}
	return e.sec[:e.secOffset], e.sec[e.secOffset:]
}

func (c cachedParts) backend(i int) []byte {
	e := c.backends[i]
	if e == nil || (e.enc == nil && e.born == c.gen) {
		return nil
	}
	if e.enc == nil {
		enc := encoder{buf: (*c.buf)[:0]}
		enc.backend(&e.be)
		e.enc = slices.Clone(enc.buf)
		*c.buf = enc.buf
	}
	return e.enc
}

func (c cachedParts) mapJSON(_ int, m *Map) []byte {
	e := c.maps[m.Path]
	if e == nil || e.ordered != m.Ordered || !sameSlice(e.entries, m.Entries) {
		return nil // another map's entry (two maps of one path)
	}
	if e.enc == nil && e.born == c.gen {
		return nil
	}
	if e.enc == nil {
		e.enc, e.encStarts = encodeMap(m, nil, nil)
	}
	return e.enc
}
