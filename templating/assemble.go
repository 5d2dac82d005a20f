package templating

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/haptic-io/haptic/renderplan"
)

// assemble turns the rendered haproxy.cfg text (with backend tokens) and
// everything recorded into an Output: each token line becomes the
// backend's section, every profile's section is placed once, in name
// order, right before the first backend section, and renderplan.NewOutput
// builds the plan.
func (r *renderState) assemble(cfg string) (*renderplan.Output, error) {
	var seg []*segBackend
	if r.segBackends != nil {
		seg = r.segBackends.sorted
	}
	pieces := slices.Grow(r.scratch.pieces[:0], 2*(len(r.backends)+len(seg))+len(r.profiles)+1)
	defer func() {
		// NewOutput copies what it keeps: the next render reuses the
		// arrays, cleared so that they hold nothing of this one.
		clear(pieces)
		r.scratch.pieces = pieces[:0]
	}()
	placed := make([]bool, len(r.backends))
	stamp := r.e.eachSalt.Add(1) // marks the segment backends placed here
	next := 0                    // the segment backend the next named token likely names
	profilesPlaced := false
	pos := 0
	for {
		i := strings.IndexByte(cfg[pos:], 0)
		if i < 0 {
			break
		}
		start := pos + i
		if !strings.HasPrefix(cfg[start:], tokenStart) {
			return nil, fmt.Errorf("haproxy.cfg: NUL byte at offset %d outside a backend token", start)
		}
		numStart := start + len(tokenStart)
		j := strings.IndexByte(cfg[numStart:], tokenEnd)
		if j < 0 {
			return nil, fmt.Errorf("haproxy.cfg: unterminated backend token at offset %d", start)
		}
		idx, sb, found, err := r.tokenBackend(cfg[numStart:numStart+j], seg, &next)
		if err != nil {
			return nil, fmt.Errorf("haproxy.cfg: invalid backend token at offset %d", start)
		}
		if !found {
			// A backend left out after its item rendered: its token goes,
			// as if backend had returned "" there.
			if start > pos {
				pieces = append(pieces, renderplan.Piece{Kind: renderplan.SectionCore, Text: cfg[pos:start]})
			}
			pos = numStart + j + 1
			continue
		}
		var name string
		if sb != nil {
			name = sb.be.Name
			if sb.placed == stamp {
				return nil, fmt.Errorf("haproxy.cfg: backend %q written twice (the value backend returns must be written exactly once)", name)
			}
			sb.placed = stamp
		} else {
			name = r.backends[idx].Name
			if placed[idx] {
				return nil, fmt.Errorf("haproxy.cfg: backend %q written twice (the value backend returns must be written exactly once)", name)
			}
			placed[idx] = true
		}
		end := numStart + j + 1
		// The token must stand on a line of its own; blanks around it go.
		lineStart := start
		for lineStart > pos && (cfg[lineStart-1] == ' ' || cfg[lineStart-1] == '\t') {
			lineStart--
		}
		if lineStart > 0 && cfg[lineStart-1] != '\n' {
			return nil, fmt.Errorf("haproxy.cfg: backend %q: its token must stand on a line of its own", name)
		}
		for end < len(cfg) && (cfg[end] == ' ' || cfg[end] == '\t') {
			end++
		}
		switch {
		case end == len(cfg):
		case cfg[end] == '\n':
			end++
		default:
			return nil, fmt.Errorf("haproxy.cfg: backend %q: its token must stand on a line of its own", name)
		}
		if lineStart > pos {
			pieces = append(pieces, renderplan.Piece{Kind: renderplan.SectionCore, Text: cfg[pos:lineStart]})
		}
		if !profilesPlaced {
			for _, pn := range sortedKeys(r.profiles) {
				pieces = append(pieces, renderplan.Piece{
					Kind: renderplan.SectionProfile, Name: pn,
					Text: renderplan.ProfileText(pn, r.profiles[pn]),
				})
			}
			profilesPlaced = true
		}
		pieces = append(pieces, renderplan.Piece{Kind: renderplan.SectionBackend, Name: name})
		pos = end
	}
	if pos < len(cfg) {
		pieces = append(pieces, renderplan.Piece{Kind: renderplan.SectionCore, Text: cfg[pos:]})
	}
	backends := r.backends
	if len(seg) > 0 {
		backends = slices.Grow(r.scratch.backends[:0], len(seg)+len(r.backends))
		defer func() {
			clear(backends)
			r.scratch.backends = backends[:0]
		}()
		for _, sb := range seg {
			backends = append(backends, sb.be)
		}
		backends = append(backends, r.backends...)
	}
	if err := r.checkPlaced(placed, seg, stamp); err != nil {
		return nil, err
	}

	profiles := make([]renderplan.Profile, 0, len(r.profiles))
	for _, pn := range sortedKeys(r.profiles) {
		mode := strings.TrimPrefix(r.profiles[pn][0], "mode ")
		profiles = append(profiles, renderplan.Profile{Name: pn, Mode: mode})
	}
	maps := make([]renderplan.Map, 0, len(r.mapsByKey))
	for _, name := range sortedKeys(r.mapsByKey) {
		m := r.mapsByKey[name]
		entries := m.entries
		if m.seg != nil {
			if len(entries) == 0 {
				// NewOutput keeps or copies them (a renderplan.Cache keeps them
				// for the next render); either way the segment copies
				// before its next change.
				entries = m.seg.sorted
				m.seg.shared = true
			} else {
				entries = append(slices.Clip(m.seg.sorted), entries...)
			}
		}
		maps = append(maps, renderplan.Map{Path: dirMaps + "/" + name, Ordered: m.ordered, Entries: entries})
	}
	files := make([]renderplan.FileContent, 0, len(r.files))
	for _, p := range sortedKeys(r.files) {
		files = append(files, *r.files[p])
	}
	sort.SliceStable(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	build := renderplan.NewOutput
	if r.plans != nil {
		// The backends' Body and Servers and the maps' entries are
		// never modified once recorded (segments copy a shared sorted
		// map before changing it), as renderplan.Cache requires.
		build = r.plans.NewOutput
	}
	out, err := build(pieces, profiles, backends, maps, files, renderplan.WithBufSize(r.bound.bufSize))
	if err != nil {
		return nil, fmt.Errorf("assemble plan: %w", err)
	}
	return out, nil
}

// recorded reports whether this render recorded a backend named name
// itself (not through a segment).
func (r *renderState) recorded(name string) bool {
	if len(r.beByName) == 0 {
		return false
	}
	_, ok := r.beByName[name]
	return ok
}

// checkPlaced fails when a backend's token never reached haproxy.cfg,
// naming the first such backend by name (whatever the order they were
// recorded in).
func (r *renderState) checkPlaced(placed []bool, seg []*segBackend, stamp uint64) error {
	missing := ""
	for i, ok := range placed {
		if n := r.backends[i].Name; !ok && (missing == "" || n < missing) {
			missing = n
		}
	}
	for _, sb := range seg {
		if sb.placed != stamp {
			if missing == "" || sb.be.Name < missing {
				missing = sb.be.Name
			}
			break // seg is sorted by name
		}
	}
	if missing != "" {
		return fmt.Errorf("backend %q: its token never reached haproxy.cfg (write the value backend returns on a line of its own)", missing)
	}
	return nil
}

// tokenBackend returns the index of the backend a token's body (between
// tokenStart and tokenEnd) stands for; found is false for the token of a
// backend that was left out. Named tokens usually come in the order of
// seg, the segment backends by name: *next is where the walk of seg
// stands, tried before the maps by name.
func (r *renderState) tokenBackend(body string, seg []*segBackend, next *int) (idx int, sb *segBackend, found bool, err error) {
	if named, ok := strings.CutPrefix(body, "="); ok {
		name, guid, ok := strings.Cut(named, "\x01")
		if !ok {
			return 0, nil, false, errors.New("malformed named token")
		}
		// The guess holds unless a backend this render recorded itself
		// has the name too: the lookup below prefers that one.
		if k := *next; k < len(seg) && seg[k].be.Name == name && !r.recorded(name) {
			*next = k + 1
			return 0, seg[k], seg[k].be.GUID == guid, nil
		}
		if idx, found = r.beByName[name]; found {
			return idx, nil, r.backends[idx].GUID == guid, nil
		}
		if r.segBackends != nil {
			if sb = r.segBackends.byName[name]; sb != nil {
				if k, ok := slices.BinarySearchFunc(seg, name, bySegName); ok {
					*next = k + 1
				}
				return 0, sb, sb.be.GUID == guid, nil
			}
		}
		return 0, nil, false, nil
	}
	idx, err = strconv.Atoi(body)
	if err != nil || idx < 0 || idx >= len(r.backends) {
		return 0, nil, false, errors.New("invalid token")
	}
	return idx, nil, true, nil
}
