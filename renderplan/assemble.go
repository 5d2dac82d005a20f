package renderplan

import (
	"bytes"
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/go-multierror"
)

// Piece is one part of haproxy.cfg handed to [NewPlan], in file order.
type Piece struct {
	Kind SectionKind
	// Name is the profile's or backend's name; empty for core pieces.
	Name string
	// Text is the piece's bytes. For core pieces it is taken verbatim
	// (adjacent core pieces merge into one section, empty ones vanish). For
	// profile pieces it is the profile's section, normally
	// [ProfileText](name, lines). For backend pieces it is empty or
	// [BackendText] of the backend: NewPlan renders backend sections itself.
	Text string
}

// ShapeReasonBody is the ShapeReason [NewPlan] gives a backend with body
// lines.
const ShapeReasonBody = "has body lines"

// NewPlan assembles an [Output] from already-rendered pieces: it is what the
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
//     [DefaultReloadOnChange] unless the FileContent overrides it.
//
// Everything is sorted (profiles and backends by name, maps and files by
// path) and the result passes [Plan.Validate]; otherwise NewPlan returns
// every problem found, aggregated with go-multierror, and no output.
func NewPlan(pieces []Piece, profiles []Profile, backends []Backend, maps []Map, files []FileContent) (*Output, error) {
	a := assembler{p: &Plan{Schema: Schema}}
	a.addProfiles(profiles)
	a.addBackends(backends)
	cfg := a.config(pieces)
	out := a.files(cfg, maps, files)

	p := a.p
	// Names and paths are unique in a valid plan, so an unstable sort is
	// deterministic there; duplicates make NewPlan fail anyway.
	slices.SortFunc(out.Files, func(a, b FileContent) int { return cmp.Compare(a.Path, b.Path) })
	slices.SortFunc(p.Files, func(a, b File) int { return cmp.Compare(a.Path, b.Path) })
	slices.SortFunc(p.Profiles, func(a, b Profile) int { return cmp.Compare(a.Name, b.Name) })
	slices.SortFunc(p.Backends, func(a, b Backend) int { return cmp.Compare(a.Name, b.Name) })
	slices.SortFunc(p.Maps, func(a, b Map) int { return cmp.Compare(a.Path, b.Path) })
	normalize(p)
	out.Plan = p

	// The backend sections were rendered from the backends above, so the
	// validator need not render them again.
	v := validator{sectionsRendered: true}
	v.plan(p)
	a.errs = append(a.errs, v.problems()...)
	if len(a.errs) > 0 {
		return nil, &multierror.Error{Errors: a.errs}
	}
	return out, nil
}

// assembler holds the plan NewPlan is building and the problems found.
type assembler struct {
	p       *Plan
	errs    []error
	profIdx map[string]int // profile name → index in p.Profiles
	beIdx   map[string]int // backend name → index in p.Backends
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

// addBackends copies the backends, fills in mode and shape and sorts
// their servers.
func (a *assembler) addBackends(backends []Backend) {
	a.p.Backends = make([]Backend, len(backends))
	a.beIdx = make(map[string]int, len(backends))
	for i := range backends {
		be := backends[i].clone()
		if _, dup := a.beIdx[be.Name]; dup {
			a.fail("backend %s: declared twice", be.Name)
		} else {
			a.beIdx[be.Name] = i
		}
		if j, ok := a.profIdx[be.Profile]; ok && be.Mode == "" {
			be.Mode = a.p.Profiles[j].Mode
		}
		sortServers(be.Servers)
		switch {
		case len(be.Body) > 0:
			be.Shape, be.ShapeReason = ShapeStructural, ShapeReasonBody
		case be.Shape == ShapeStructural && be.ShapeReason != "":
			// Forced structural by the caller.
		default:
			be.Shape, be.ShapeReason = ShapeDynamic, ""
		}
		a.p.Backends[i] = be
	}
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
		size += backendTextSize(&p.Backends[i])
	}
	cfg := make([]byte, 0, size)
	profSeen := make([]bool, len(p.Profiles))
	beSeen := make([]bool, len(p.Backends))
	for _, pc := range pieces {
		start := len(cfg)
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
			j, ok := a.beIdx[pc.Name]
			if !ok {
				a.fail("backend %s: piece without a backend", pc.Name)
				continue
			}
			if beSeen[j] {
				a.fail("backend %s: more than one piece", pc.Name)
				continue
			}
			beSeen[j] = true
			cfg = appendBackendText(cfg, &p.Backends[j])
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
	}
	for j, seen := range profSeen {
		if !seen {
			a.fail("profile %s: no piece places it in %s", p.Profiles[j].Name, ConfigPath)
		}
	}
	for j, seen := range beSeen {
		if !seen {
			a.fail("backend %s: no piece places it in %s", p.Backends[j].Name, ConfigPath)
		}
	}
	for i := range p.Sections {
		s := &p.Sections[i]
		s.Digest = DigestOf(cfg[s.Offset : s.Offset+s.Length])
	}
	return cfg
}

// files records haproxy.cfg, generates the map files and takes the
// caller's files, in p.Files and in the returned output (unsorted).
func (a *assembler) files(cfg []byte, maps []Map, files []FileContent) *Output {
	p := a.p
	out := &Output{Files: make([]FileContent, 0, 1+len(maps)+len(files))}
	out.Files = append(out.Files, FileContent{Path: ConfigPath, Kind: FileConfig, Body: cfg})
	p.Files = append(p.Files, File{Path: ConfigPath, Kind: FileConfig, ReloadOnChange: true})
	mapBody := make(map[string][]byte, len(maps))
	p.Maps = make([]Map, len(maps))
	for i, m := range maps {
		m.Entries = slices.Clone(m.Entries)
		if !m.Ordered {
			slices.SortFunc(m.Entries, func(a, b MapEntry) int {
				return cmp.Or(cmp.Compare(a.Key, b.Key), cmp.Compare(a.Value, b.Value))
			})
		}
		p.Maps[i] = m
		if _, dup := mapBody[m.Path]; dup {
			a.fail("map %s: declared twice", m.Path)
			continue
		}
		body := MapText(m)
		mapBody[m.Path] = body
		out.Files = append(out.Files, FileContent{Path: m.Path, Kind: FileMap, Body: body})
		p.Files = append(p.Files, File{Path: m.Path, Kind: FileMap})
	}
	for _, f := range files {
		switch {
		case f.Path == ConfigPath || f.Kind == FileConfig:
			a.fail("file %s: %s is generated from the pieces; pass no config file", f.Path, ConfigPath)
			continue
		case f.Kind == FileMap:
			if body, ok := mapBody[f.Path]; !ok || !bytes.Equal(body, f.Body) {
				a.fail("file %s: map files are generated from the maps; pass it as a Map", f.Path)
			}
			continue
		}
		reload := DefaultReloadOnChange(f.Kind)
		if f.ReloadOnChange != nil {
			reload = *f.ReloadOnChange
		}
		f.Body = slices.Clone(f.Body)
		out.Files = append(out.Files, f)
		p.Files = append(p.Files, File{Path: f.Path, Kind: f.Kind, ReloadOnChange: reload})
	}
	for i := range out.Files {
		p.Files[i].Digest = DigestOf(out.Files[i].Body)
		p.Files[i].Size = len(out.Files[i].Body)
	}
	return out
}

// sortServers sorts by name; servers of one name (invalid) by the rest of
// their fields, so the order never depends on the caller's.
func sortServers(s []Server) {
	slices.SortFunc(s, func(a, b Server) int {
		if c := cmp.Compare(a.Name, b.Name); c != 0 {
			return c
		}
		return cmp.Or(cmp.Compare(a.Address, b.Address), cmp.Compare(a.Port, b.Port), cmp.Compare(a.Weight, b.Weight),
			cmp.Compare(strings.Join(a.Keywords, " "), strings.Join(b.Keywords, " ")))
	})
}
