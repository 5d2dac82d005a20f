package renderplan

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/hashicorp/go-multierror"
)

// MaxGUIDLen is the longest guid HAProxy accepts, in bytes.
const MaxGUIDLen = 127

// MaxWeight is the largest server weight HAProxy accepts.
const MaxWeight = 256

// Validate checks that p is consistent and that rendering it gives the
// structure the plan describes. It returns every problem it finds,
// aggregated with go-multierror, each naming the object:
// "backend be_x: guid longer than 127 bytes". The rules:
//
//   - Schema is [Schema]. BufSize is 0 or [MinBufSize] to [MaxBufSize].
//     Profiles and backends are sorted by name, maps and files by path,
//     servers by name, without duplicates.
//   - Backend, server and profile names and guids are HAProxy-legal: not
//     empty, only the bytes A-Z a-z 0-9 _ . : - . A name is at most
//     [MaxNameLen] bytes, a guid at most [MaxGUIDLen]. Guids are unique across backends and servers
//     (one namespace, as in HAProxy); a server's guid is the token after
//     a "guid" keyword. Server names are unique per backend. No backend
//     is named like a profile.
//   - A backend's profile exists and has the backend's mode; modes are
//     "http" or "tcp". A dynamic backend has no body lines; a structural
//     one states its reason. Body lines are not empty and hold no newline,
//     carriage return or NUL.
//   - A server's address is an IP address in canonical form
//     (netip.Addr.String: "10.0.0.1", "2001:db8::1", no zone); host names
//     are not allowed, plans carry resolved addresses. Port is 1 to 65535
//     (0, "the client's port", is not allowed: plans carry explicit
//     ports). Weight is 0 to [MaxWeight]. Keywords are tokens: not empty,
//     no whitespace, control characters, quotes, backslash or '#', and
//     not "weight", "disabled" or "check" (fields carry those); together,
//     with a space between them, at most [MaxKeywordsLen] bytes.
//   - File paths are relative and clean: not empty, not absolute, equal to
//     path.Clean of themselves, no ".." element, no whitespace or control
//     characters, at most [MaxPathLen] bytes. File kinds are known; haproxy.cfg exists, is the only
//     config file and reloads on change.
//   - Every map has a file of kind map at its path whose digest and size
//     are those of [MapText] of the map, and every map file has a map. Map
//     keys are not empty, hold no whitespace or control characters and do
//     not start with '#'; values are not empty, hold no control character
//     but tab and neither start nor end with a space or tab (HAProxy's map
//     file format: the key is the first word, the value the rest of the
//     line). Every entry fits in [MaxLine] of BufSize, as [MapLineLen]
//     counts it: HAProxy reads it as one line of the file and the agent
//     can send it as one command. Entries of unordered maps are sorted by
//     key, keys unique.
//   - Sections partition haproxy.cfg: offsets start at 0 and are
//     contiguous, no section is empty, and the lengths add up to the size
//     of haproxy.cfg. Core sections have no name. Each profile and each
//     backend has exactly one section; a profile's section digest is the
//     profile's Digest and a backend's is the digest of [BackendText].
//
// All strings must be valid UTF-8. A plan holds no file bodies, so the
// lines of its crt-lists are checked where a body is known: [NewOutput]
// and the agent apply [CheckLines] to them.
func (p *Plan) Validate() error {
	if p == nil {
		return fmt.Errorf("renderplan: nil plan")
	}
	v := validator{}
	v.plan(p)
	if len(v.errs) == 0 {
		return nil
	}
	return &multierror.Error{Errors: v.errs}
}

type validator struct {
	// sectionsRendered skips re-rendering backend sections to compare
	// digests: NewOutput made them from the backends.
	sectionsRendered bool
	// mapsRendered skips re-rendering map files to compare digests and
	// sizes: NewOutput made the file at each map's path from that map.
	mapsRendered bool
	// backendsOrdered skips comparing the names of adjacent backends:
	// NewOutput ordered them by name and found no two of one name.
	backendsOrdered bool
	// sectionBackends, if set, holds per section the position of the
	// backend it probably holds (-1 for none): a hint for finding it.
	sectionBackends []int
	// backendEntries, if set, holds per backend its Cache entry (or
	// nil): the checks about a backend alone are skipped for one known to
	// pass them, and recorded for the others. mapEntries are a
	// Cache's maps, for the same about map entries.
	backendEntries []*backendEntry
	mapEntries     map[string]*mapEntry
	errs           []error
	// bufSize is the plan's BufSize and maxLine its [MaxLine], set by
	// planWith before the maps are checked.
	bufSize, maxLine int
	// buffers, if set, lends the validator working slices.
	buffers *buffers
	buf     []byte    // scratch for rendering sections and maps
	guids   []guidUse // in plan order, for checkGUIDs
}

func (v *validator) add(format string, args ...any) {
	v.errs = append(v.errs, fmt.Errorf(format, args...))
}

func (v *validator) problems() []error { return v.errs }

// subject names the object of a problem; it is formatted only when there
// is a problem to report. Names that are not legal are quoted.
type subject struct {
	kind, name string
	server     string // set for a server of backend name
}

func (s subject) String() string {
	name := s.name
	switch s.kind {
	case "backend", "profile":
		if nameProblem(name) != "" {
			name = strconv.Quote(name)
		}
	default:
		if pathProblem(name) != "" {
			name = strconv.Quote(name)
		}
	}
	if s.server == "" {
		return s.kind + " " + name
	}
	srv := s.server
	if nameProblem(srv) != "" {
		srv = strconv.Quote(srv)
	}
	return s.kind + " " + name + ": server " + srv
}

func (v *validator) plan(p *Plan) {
	v.planWith(p, v.checkBackends(p, profilesByName(p.Profiles)))
}

// profilesByName returns the profiles by name (the last of a name wins).
func profilesByName(ps []Profile) map[string]*Profile {
	m := make(map[string]*Profile, len(ps))
	for i := range ps {
		m[ps[i].Name] = &ps[i]
	}
	return m
}

// backendChecks are the results of checking a plan's backends, their
// servers and the guids they use: the problems, in plan order, and what
// the other checks need of them.
type backendChecks struct {
	errs   []error
	guids  []guidUse
	sorted bool // the backends are sorted strictly by name
}

// planWith is plan with the backends checked already (b): it checks the
// rest and adds every problem to v in plan order.
func (v *validator) planWith(p *Plan, b *backendChecks) {
	if p.Schema != Schema {
		v.add("plan: schema %q is not %q", p.Schema, Schema)
	}
	if p.BufSize != 0 && (p.BufSize < MinBufSize || p.BufSize > MaxBufSize) {
		v.add("plan: bufSize %d out of range %d-%d", p.BufSize, MinBufSize, MaxBufSize)
	}
	v.bufSize, v.maxLine = p.BufSize, MaxLine(p.BufSize)

	// Profiles.
	profiles := make(map[string]*Profile, len(p.Profiles))
	for i := range p.Profiles {
		pr := &p.Profiles[i]
		if i > 0 && p.Profiles[i-1].Name >= pr.Name {
			v.add("profile %s: %s", pr.Name, orderProblem(p.Profiles[i-1].Name, pr.Name))
		}
		if problem := nameProblem(pr.Name); problem != "" {
			v.add("profile %q: name %s", pr.Name, problem)
		}
		if !validMode(pr.Mode) {
			v.add("profile %s: mode %q is not http or tcp", pr.Name, pr.Mode)
		}
		if !validDigest(pr.Digest) {
			v.add("profile %s: digest %q is not 16 lower-case hex digits", pr.Name, pr.Digest)
		}
		profiles[pr.Name] = pr
	}

	v.errs = append(v.errs, b.errs...)
	v.guids = b.guids

	// Files.
	var cfg *File
	files := make(map[string]*File, len(p.Files))
	for i := range p.Files {
		f := &p.Files[i]
		what := subject{kind: "file", name: f.Path}
		if i > 0 && p.Files[i-1].Path >= f.Path {
			v.add("%s: %s", what, orderProblem(p.Files[i-1].Path, f.Path))
		}
		if problem := pathProblem(f.Path); problem != "" {
			v.add("%s: path %s", what, problem)
		}
		switch f.Kind {
		case FileConfig:
			if f.Path != ConfigPath {
				v.add("%s: kind config is only for %s", what, ConfigPath)
			}
		case FileMap, FileCert, FileCrtList, FileGeneral:
			if f.Path == ConfigPath {
				v.add("%s: kind %q, want config", what, f.Kind)
			}
		default:
			v.add("%s: kind %q is unknown", what, f.Kind)
		}
		if !validDigest(f.Digest) {
			v.add("%s: digest %q is not 16 lower-case hex digits", what, f.Digest)
		}
		if f.Size < 0 {
			v.add("%s: negative size %d", what, f.Size)
		}
		if f.Path == ConfigPath {
			cfg = f
			if !f.ReloadOnChange {
				v.add("%s: does not reload on change", what)
			}
		}
		files[f.Path] = f
	}
	if cfg == nil {
		v.add("plan: no %s file", ConfigPath)
	}

	// Maps.
	for i := range p.Maps {
		m := &p.Maps[i]
		what := subject{kind: "map", name: m.Path}
		if i > 0 && p.Maps[i-1].Path >= m.Path {
			v.add("%s: %s", what, orderProblem(p.Maps[i-1].Path, m.Path))
		}
		if problem := pathProblem(m.Path); problem != "" {
			v.add("%s: path %s", what, problem)
		}
		v.mapEntriesChecked(m, what)
		f, ok := files[m.Path]
		switch {
		case !ok:
			v.add("%s: no file at its path", what)
		case f.Kind != FileMap:
			v.add("%s: file at its path has kind %q, want map", what, f.Kind)
		case v.mapsRendered:
			// NewOutput generated the file from m: nothing to compare.
		default:
			v.buf = appendMapText(slices.Grow(v.buf[:0], mapTextSize(m)), m)
			if f.Size != len(v.buf) || !isDigestOf(f.Digest, v.buf) {
				v.add("%s: file digest or size does not match the entries", what)
			}
		}
	}
	for i := range p.Files {
		if f := &p.Files[i]; f.Kind == FileMap {
			if _, ok := p.Map(f.Path); !ok {
				v.add("file %s: map file without a map", f.Path)
			}
		}
	}

	v.sections(p, cfg, profiles, newBackendIndex(p.Backends, b.sorted))
}

// checkBackends checks p's backends and servers and the guids they use,
// looking their profiles up in profiles (by name: only names and modes
// are read). It adds nothing to v: the problems are in the result. It
// reads only p.Backends, profiles and the backends' cache entries, so a
// build runs it while it assembles haproxy.cfg.
func (v *validator) checkBackends(p *Plan, profiles map[string]*Profile) *backendChecks {
	v = &validator{backendsOrdered: v.backendsOrdered, backendEntries: v.backendEntries, buffers: v.buffers}
	// Backends usually share a few profiles: remember the last one found.
	var lastProfile *Profile
	lookupProfile := func(name string) (*Profile, bool) {
		if lastProfile == nil || lastProfile.Name != name {
			pr, ok := profiles[name]
			if !ok {
				return nil, false
			}
			lastProfile = pr
		}
		return lastProfile, true
	}

	// Backends and servers; guids share one namespace (checkGUIDs).
	if v.buffers != nil {
		v.guids = scratch(&v.buffers.guids, len(p.Backends))[:0]
	} else {
		v.guids = make([]guidUse, 0, len(p.Backends))
	}
	backendsSorted := true // strictly: sorted and unique
	// Backends named like a profile. When the caller vouches for the
	// backends' strict name order, each profile's name is searched for
	// once, rather than every backend's name looked up.
	var clashes []int // positions, ascending
	if v.backendsOrdered {
		for name := range profiles {
			if k, ok := slices.BinarySearchFunc(p.Backends, name, backendNamed); ok {
				clashes = append(clashes, k)
			}
		}
		slices.Sort(clashes)
	}
	namedLikeAProfile := func(i int, name string) bool {
		if !v.backendsOrdered {
			_, clash := profiles[name]
			return clash
		}
		if len(clashes) > 0 && clashes[0] == i {
			clashes = clashes[1:]
			return true
		}
		return false
	}
	for i := range p.Backends {
		be := &p.Backends[i]
		what := subject{kind: "backend", name: be.Name}
		if i > 0 && !v.backendsOrdered && p.Backends[i-1].Name >= be.Name {
			backendsSorted = false
			v.add("%s: %s", what, orderProblem(p.Backends[i-1].Name, be.Name))
		}
		var e *backendEntry
		if v.backendEntries != nil {
			e = v.backendEntries[i]
		}
		// The checks that concern be alone add problems (local) among
		// those that concern the plan (clash, profile); with a cache
		// entry that passed the first, only the second are left.
		errsBefore, guidsBefore, planErrs := len(v.errs), len(v.guids), 0
		clash := func() {
			if namedLikeAProfile(i, be.Name) {
				v.add("%s: a profile has the same name", what)
				planErrs++
			}
		}
		profile := func() {
			if pr, ok := lookupProfile(be.Profile); !ok {
				v.add("%s: profile %q not in plan", what, be.Profile)
				planErrs++
			} else if pr.Mode != be.Mode {
				v.add("%s: mode %q differs from profile %s mode %q", what, be.Mode, pr.Name, pr.Mode)
				planErrs++
			}
		}
		if e != nil && e.checked && e.valid {
			clash()
			v.useGUID(be.GUID, i, -1)
			profile()
			for _, g := range e.serverGUIDs {
				v.useGUID(g.guid, i, g.j)
			}
			continue
		}
		if problem := nameProblem(be.Name); problem != "" {
			v.add("%s: name %s", what, problem)
		}
		clash()
		if problem := guidProblem(be.GUID); problem != "" {
			v.add("%s: guid %s", what, problem)
		} else {
			v.useGUID(be.GUID, i, -1)
		}
		profile()
		if !validMode(be.Mode) {
			v.add("%s: mode %q is not http or tcp", what, be.Mode)
		}
		switch be.Shape {
		case ShapeDynamic:
			if len(be.Body) > 0 {
				v.add("%s: dynamic backend has body lines", what)
			}
			if be.ShapeReason != "" {
				v.add("%s: dynamic backend has a shape reason", what)
			}
		case ShapeStructural:
			if be.ShapeReason == "" {
				v.add("%s: structural backend without a shape reason", what)
			}
		default:
			v.add("%s: shape %q is not dynamic or structural", what, be.Shape)
		}
		if problem := textProblem(be.ShapeReason); problem != "" {
			v.add("%s: shape reason %s", what, problem)
		}
		for j, l := range be.Body {
			if problem := lineProblem(l); problem != "" {
				v.add("%s: body line %d %s", what, j+1, problem)
			}
		}
		for j := range be.Servers {
			s := &be.Servers[j]
			swhat := subject{kind: "backend", name: be.Name, server: s.Name}
			if j > 0 && be.Servers[j-1].Name >= s.Name {
				v.add("%s: %s", swhat, orderProblem(be.Servers[j-1].Name, s.Name))
			}
			if problem := nameProblem(s.Name); problem != "" {
				v.add("%s: name %s", swhat, problem)
			}
			v.server(swhat, s, i, j)
		}
		if e != nil && !e.checked {
			e.checked, e.valid = true, len(v.errs)-errsBefore == planErrs
			if e.valid {
				for _, u := range v.guids[guidsBefore:] {
					if u.j >= 0 {
						e.serverGUIDs = append(e.serverGUIDs, serverGUID{u.guid, u.j})
					}
				}
			}
		}
	}
	v.checkGUIDs(p)
	return &backendChecks{errs: v.errs, guids: v.guids, sorted: backendsSorted}
}

// mapEntriesChecked checks the entries of m, unless a cache entry for
// them says they passed, and records the verdict in the cache entry.
func (v *validator) mapEntriesChecked(m *Map, what subject) {
	e := v.mapEntries[m.Path]
	if e != nil && (e.ordered != m.Ordered || !sameSlice(e.entries, m.Entries)) {
		e = nil // another map's entry (two maps of one path)
	}
	if e != nil && e.checked {
		if e.valid {
			return
		}
	}
	// Entries of the map's previous version passed: those found again
	// (both sorted, so in one walk) need no key and value checks.
	var prev []MapEntry
	if e != nil && !m.Ordered {
		prev = e.prevValid
		if e.prevRuns != nil {
			v.mapEntriesByRuns(m, what, e)
			return
		}
	}
	// An entry found in prev right after the entry before it was found
	// there follows it in prev too: its key is greater (prev passed, so
	// its keys increase strictly), and the order check is skipped.
	before := len(v.errs)
	k := 0
	prevFound := -1 // where the entry before was found in prev, -1 if not
	for j, ent := range m.Entries {
		for k < len(prev) && prev[k].Key < ent.Key {
			k++
		}
		found := -1
		if k < len(prev) && prev[k] == ent {
			found = k
			k++
		} else {
			if problem := mapKeyProblem(ent.Key); problem != "" {
				v.add("%s: entry %d: key %q %s", what, j+1, ent.Key, problem)
			}
			if problem := mapValueProblem(ent.Value); problem != "" {
				v.add("%s: entry %d: value %q %s", what, j+1, ent.Value, problem)
			}
			v.mapEntryLength(m, what, j)
		}
		follows := found >= 0 && found == prevFound+1 && prevFound >= 0
		prevFound = found
		if !m.Ordered && j > 0 && !follows && m.Entries[j-1].Key >= ent.Key {
			if m.Entries[j-1].Key == ent.Key {
				v.add("%s: key %q appears twice in an unordered map", what, ent.Key)
			} else {
				v.add("%s: entry %d: unordered map entries not sorted by key", what, j+1)
			}
		}
	}
	if e != nil {
		e.checked, e.valid, e.prevValid, e.prevRuns = true, len(v.errs) == before, nil, nil
	}
}

// mapEntriesByRuns is the end of mapEntriesChecked for an unordered map
// whose entries e matched against those of its previous version, which
// passed (e.prevValid, e.prevRuns): entries found there need no key and
// value checks, and two entries found one after the other (in one run)
// follow in order, so only the pairs that do not lie in one run are
// compared. It reports what mapEntriesChecked reports, in its order.
func (v *validator) mapEntriesByRuns(m *Map, what subject, e *mapEntry) {
	before := len(v.errs)
	for _, r := range e.prevRuns {
		if r.from >= 0 {
			v.mapEntryOrder(m, what, r.at)
			continue
		}
		for j := r.at; j < r.at+r.n; j++ {
			ent := m.Entries[j]
			if problem := mapKeyProblem(ent.Key); problem != "" {
				v.add("%s: entry %d: key %q %s", what, j+1, ent.Key, problem)
			}
			if problem := mapValueProblem(ent.Value); problem != "" {
				v.add("%s: entry %d: value %q %s", what, j+1, ent.Value, problem)
			}
			v.mapEntryLength(m, what, j)
			v.mapEntryOrder(m, what, j)
		}
	}
	e.checked, e.valid, e.prevValid, e.prevRuns = true, len(v.errs) == before, nil, nil
}

// mapEntryLength checks that entry j of m fits in v.maxLine.
func (v *validator) mapEntryLength(m *Map, what subject, j int) {
	ent := &m.Entries[j]
	if problem := mapEntryTooLong(m.Path, ent.Key, ent.Value, v.maxLine, v.bufSize); problem != "" {
		v.add("%s: entry %d: key %s %s", what, j+1, quoteShort(ent.Key), problem)
	}
}

// quoteShort quotes s, cut to its first 40 bytes (and its length given)
// when longer.
func quoteShort(s string) string {
	if len(s) <= 40 {
		return strconv.Quote(s)
	}
	return fmt.Sprintf("%q… (%d bytes)", s[:40], len(s))
}

// mapEntryOrder checks that entry j of the unordered map m follows
// entry j-1 in order.
func (v *validator) mapEntryOrder(m *Map, what subject, j int) {
	if j == 0 || m.Entries[j-1].Key < m.Entries[j].Key {
		return
	}
	if m.Entries[j-1].Key == m.Entries[j].Key {
		v.add("%s: key %q appears twice in an unordered map", what, m.Entries[j].Key)
	} else {
		v.add("%s: entry %d: unordered map entries not sorted by key", what, j+1)
	}
}

// server checks server j of backend i.
func (v *validator) server(what subject, s *Server, i, j int) {
	if problem := addressProblem(s.Address); problem != "" {
		v.add("%s: address %q %s", what, s.Address, problem)
	}
	if s.Port < 1 || s.Port > 65535 {
		v.add("%s: port %d out of range 1-65535", what, s.Port)
	}
	if s.Weight < 0 || s.Weight > MaxWeight {
		v.add("%s: weight %d out of range 0-%d", what, s.Weight, MaxWeight)
	}
	if n := keywordsLen(s.Keywords); n > MaxKeywordsLen {
		v.add("%s: keywords take %d bytes, more than %d", what, n, MaxKeywordsLen)
	}
	for k, tok := range s.Keywords {
		if problem := tokenProblem(tok); problem != "" {
			v.add("%s: keyword %d %q %s", what, k+1, tok, problem)
			continue
		}
		switch tok {
		case "weight", "disabled", "check":
			v.add("%s: keyword %q is set through the server's field", what, tok)
		case "guid":
			if k+1 >= len(s.Keywords) {
				v.add("%s: keyword guid without a value", what)
			} else if problem := guidProblem(s.Keywords[k+1]); problem != "" {
				v.add("%s: guid %s", what, problem)
			} else {
				v.useGUID(s.Keywords[k+1], i, j)
			}
		}
	}
}

// keywordsLen is the length of keywords joined by spaces.
func keywordsLen(keywords []string) int {
	n := 0
	for _, k := range keywords {
		n += len(k) + 1
	}
	return max(n-1, 0)
}

func (v *validator) sections(p *Plan, cfg *File, profiles map[string]*Profile, backends *backendIndex) {
	offset := 0
	placedProfile := make(map[string]bool, len(p.Profiles))
	var placedBackend []bool // by backends.find
	if v.buffers != nil {
		placedBackend = scratch(&v.buffers.placed, len(p.Backends))
	} else {
		placedBackend = make([]bool, len(p.Backends))
	}
	for i := range p.Sections {
		s := &p.Sections[i]
		what := sectionSubject{i, s}
		if s.Offset != offset {
			v.add("%s: offset %d, want %d (sections must be contiguous)", what, s.Offset, offset)
		}
		if s.Length <= 0 {
			v.add("%s: length %d is not positive", what, s.Length)
		}
		offset = s.Offset + s.Length
		if !validDigest(s.Digest) {
			v.add("%s: digest %q is not 16 lower-case hex digits", what, s.Digest)
		}
		switch s.Kind {
		case SectionCore:
			if s.Name != "" {
				v.add("%s: core section has a name", what)
			}
		case SectionProfile:
			pr, ok := profiles[s.Name]
			switch {
			case !ok:
				v.add("%s: profile not in plan", what)
			case placedProfile[s.Name]:
				v.add("profile %s: more than one section", s.Name)
			case pr.Digest != s.Digest:
				v.add("profile %s: section digest %s differs from profile digest %s", s.Name, s.Digest, pr.Digest)
			}
			placedProfile[s.Name] = true
		case SectionBackend:
			hint := -1
			if i < len(v.sectionBackends) {
				hint = v.sectionBackends[i]
			}
			k, ok := backends.find(s.Name, hint)
			switch {
			case !ok:
				v.add("%s: backend not in plan", what)
			case placedBackend[k]:
				v.add("backend %s: more than one section", s.Name)
			case !v.sectionsRendered:
				v.buf = appendBackendText(v.buf[:0], &p.Backends[k])
				if s.Length != len(v.buf) || !isDigestOf(s.Digest, v.buf) {
					v.add("backend %s: section is not BackendText of the backend", s.Name)
				}
			}
			if ok {
				placedBackend[k] = true
			}
		default:
			v.add("%s: kind %q is unknown", what, s.Kind)
		}
	}
	if cfg != nil && offset != cfg.Size {
		v.add("plan: sections cover %d bytes, %s has %d", offset, ConfigPath, cfg.Size)
	}
	for _, pr := range p.Profiles {
		if !placedProfile[pr.Name] {
			v.add("profile %s: no section", pr.Name)
		}
	}
	for i := range p.Backends {
		name := p.Backends[i].Name
		if k, _ := backends.find(name, i); !placedBackend[k] {
			v.add("backend %s: no section", name)
		}
	}
}

// guidUse is one use of a guid: by backend i of the plan (server -1) or
// by its server j.
type guidUse struct {
	guid      string
	seq       int // the use's place in plan order
	i, j      int
	errsAfter int // how many problems were found before the use
}

// useGUID records that backend i (j < 0) or its server j uses guid.
func (v *validator) useGUID(guid string, i, j int) {
	v.guids = append(v.guids, guidUse{guid: guid, seq: len(v.guids), i: i, j: j, errsAfter: len(v.errs)})
}

// checkGUIDs reports every use of a guid after its first, at the place
// in the problem list where it was used, naming the first user. Sorting
// the uses costs less than a map of all guids, and costs no more than a
// check in the usual case: guids follow the backend names, so the uses
// come sorted.
func (v *validator) checkGUIDs(p *Plan) {
	uses := v.guids
	if guidsIncrease(uses) {
		return // sorted and unique
	}
	sortFunc(uses, func(a, b guidUse) int {
		if c := strings.Compare(a.guid, b.guid); c != 0 {
			return c
		}
		return cmp.Compare(a.seq, b.seq)
	})
	type dup struct{ use, first *guidUse }
	var dups []dup
	for run := 0; run < len(uses); {
		end := run + 1
		for end < len(uses) && uses[end].guid == uses[run].guid {
			dups = append(dups, dup{&uses[end], &uses[run]})
			end++
		}
		run = end
	}
	if len(dups) == 0 {
		return
	}
	slices.SortFunc(dups, func(a, b dup) int { return cmp.Compare(a.use.seq, b.use.seq) })
	owner := func(u *guidUse) subject {
		be := &p.Backends[u.i]
		if u.j < 0 {
			return subject{kind: "backend", name: be.Name}
		}
		return subject{kind: "backend", name: be.Name, server: be.Servers[u.j].Name}
	}
	errs := make([]error, 0, len(v.errs)+len(dups))
	done := 0
	for _, d := range dups {
		errs = append(errs, v.errs[done:d.use.errsAfter]...)
		done = d.use.errsAfter
		errs = append(errs, fmt.Errorf("%s: guid %s already used by %s", owner(d.use), d.use.guid, owner(d.first)))
	}
	v.errs = append(errs, v.errs[done:]...)
}

// guidsIncrease reports whether the guids of uses are strictly
// increasing.
func guidsIncrease(uses []guidUse) bool {
	for i := 1; i < len(uses); i++ {
		if uses[i-1].guid >= uses[i].guid {
			return false
		}
	}
	return true
}

// backendIndex finds a plan's backends by name for the validator. When
// the backends are sorted and unique, as in every valid plan, it tries a
// hint, then the position after the previous find (sections often come in
// name order), then searches; after a few misses it builds a map, as it
// does from the start for backends that are not sorted and unique. Of
// backends with one name, the last wins, as when filling a map in order.
type backendIndex struct {
	bs     []Backend
	byName map[string]int
	next   int
	misses int
}

// newBackendIndex indexes bs; sorted says they are sorted and unique.
func newBackendIndex(bs []Backend, sorted bool) *backendIndex {
	x := &backendIndex{bs: bs}
	if !sorted {
		x.buildMap()
	}
	return x
}

func (x *backendIndex) buildMap() {
	x.byName = make(map[string]int, len(x.bs))
	for i := range x.bs {
		x.byName[x.bs[i].Name] = i
	}
}

// find returns the position of the backend named name. hint is where it
// probably is, or -1.
func (x *backendIndex) find(name string, hint int) (int, bool) {
	if x.byName == nil {
		k := x.next
		if hint >= 0 && hint < len(x.bs) {
			k = hint
		}
		if k < len(x.bs) && x.bs[k].Name == name {
			x.next = k + 1
			return k, true
		}
		if x.misses++; x.misses <= 16 {
			k, ok := slices.BinarySearchFunc(x.bs, name, backendNamed)
			x.next = k + 1
			return k, ok
		}
		x.buildMap()
	}
	k, ok := x.byName[name]
	return k, ok
}

// sectionSubject names a section in a problem, formatted only when needed.
type sectionSubject struct {
	i int
	s *Section
}

func (s sectionSubject) String() string {
	return fmt.Sprintf("section %d (%s %s)", s.i+1, s.s.Kind, s.s.Name)
}

func validMode(m string) bool { return m == "http" || m == "tcp" }

func orderProblem(prev, cur string) string {
	if prev == cur {
		return "appears twice"
	}
	return fmt.Sprintf("not sorted (after %q)", prev)
}
