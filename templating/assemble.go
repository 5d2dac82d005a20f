package templating

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/haptic-io/haptic/renderplan"
)

// assemble turns the rendered haproxy.cfg text (with backend tokens) and
// everything recorded into an Output: each token line becomes the
// backend's section, every profile's section is placed once, in name
// order, right before the first backend section, and renderplan.NewPlan
// builds the plan.
func (r *renderState) assemble(cfg string) (*renderplan.Output, error) {
	pieces := make([]renderplan.Piece, 0, 2*len(r.backends)+len(r.profiles)+1)
	placed := make([]bool, len(r.backends))
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
		idx, found, err := r.tokenBackend(cfg[numStart : numStart+j])
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
		name := r.backends[idx].Name
		if placed[idx] {
			return nil, fmt.Errorf("haproxy.cfg: backend %q written twice (the value backend returns must be written exactly once)", name)
		}
		placed[idx] = true
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
	for i, ok := range placed {
		if !ok {
			return nil, fmt.Errorf("backend %q: its token never reached haproxy.cfg (write the value backend returns on a line of its own)", r.backends[i].Name)
		}
	}

	profiles := make([]renderplan.Profile, 0, len(r.profiles))
	for _, pn := range sortedKeys(r.profiles) {
		mode := strings.TrimPrefix(r.profiles[pn][0], "mode ")
		profiles = append(profiles, renderplan.Profile{Name: pn, Mode: mode})
	}
	maps := make([]renderplan.Map, 0, len(r.mapsByKey))
	for _, name := range sortedKeys(r.mapsByKey) {
		m := r.mapsByKey[name]
		maps = append(maps, renderplan.Map{Path: dirMaps + "/" + name, Ordered: m.ordered, Entries: m.entries})
	}
	files := make([]renderplan.FileContent, 0, len(r.files))
	for _, p := range sortedKeys(r.files) {
		files = append(files, *r.files[p])
	}
	sort.SliceStable(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	out, err := renderplan.NewPlan(pieces, profiles, r.backends, maps, files)
	if err != nil {
		return nil, fmt.Errorf("assemble plan: %w", err)
	}
	return out, nil
}

// tokenBackend returns the index of the backend a token's body (between
// tokenStart and tokenEnd) stands for; found is false for the token of a
// backend that was left out.
func (r *renderState) tokenBackend(body string) (idx int, found bool, err error) {
	if named, ok := strings.CutPrefix(body, "="); ok {
		name, guid, ok := strings.Cut(named, "\x01")
		if !ok {
			return 0, false, errors.New("malformed named token")
		}
		idx, found = r.beByName[name]
		return idx, found && r.backends[idx].GUID == guid, nil
	}
	idx, err = strconv.Atoi(body)
	if err != nil || idx < 0 || idx >= len(r.backends) {
		return 0, false, errors.New("invalid token")
	}
	return idx, true, nil
}
