package renderplan

import (
	"fmt"
	"net/netip"
	"strconv"

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
//   - Schema is [Schema]. Profiles and backends are sorted by name, maps
//     and files by path, servers by name, without duplicates.
//   - Backend, server and profile names and guids are HAProxy-legal: not
//     empty, only the bytes A-Z a-z 0-9 _ . : - . A guid is at most
//     [MaxGUIDLen] bytes. Guids are unique across backends and servers
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
//     not "weight", "disabled" or "check" (fields carry those).
//   - File paths are relative and clean: not empty, not absolute, equal to
//     path.Clean of themselves, no ".." element, no whitespace or control
//     characters. File kinds are known; haproxy.cfg exists, is the only
//     config file and reloads on change.
//   - Every map has a file of kind map at its path whose digest and size
//     are those of [MapText] of the map, and every map file has a map. Map
//     keys are not empty, hold no whitespace or control characters and do
//     not start with '#'; values are not empty, hold no control character
//     but tab and neither start nor end with a space or tab (HAProxy's map
//     file format: the key is the first word, the value the rest of the
//     line). Entries of unordered maps are sorted by key, keys unique.
//   - Sections partition haproxy.cfg: offsets start at 0 and are
//     contiguous, no section is empty, and the lengths add up to the size
//     of haproxy.cfg. Core sections have no name. Each profile and each
//     backend has exactly one section; a profile's section digest is the
//     profile's Digest and a backend's is the digest of [BackendText].
//
// All strings must be valid UTF-8.
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
	// digests: NewPlan made them from the backends.
	sectionsRendered bool
	errs             []error
	buf              []byte // scratch for rendering sections
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
	if p.Schema != Schema {
		v.add("plan: schema %q is not %q", p.Schema, Schema)
	}

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

	// Backends and servers; guids share one namespace.
	guids := make(map[string]subject, len(p.Backends)*3)
	useGUID := func(guid string, owner subject) {
		if prev, dup := guids[guid]; dup {
			v.add("%s: guid %s already used by %s", owner, guid, prev)
			return
		}
		guids[guid] = owner
	}
	backends := make(map[string]*Backend, len(p.Backends))
	for i := range p.Backends {
		be := &p.Backends[i]
		what := subject{kind: "backend", name: be.Name}
		if i > 0 && p.Backends[i-1].Name >= be.Name {
			v.add("%s: %s", what, orderProblem(p.Backends[i-1].Name, be.Name))
		}
		if problem := nameProblem(be.Name); problem != "" {
			v.add("%s: name %s", what, problem)
		}
		if _, clash := profiles[be.Name]; clash {
			v.add("%s: a profile has the same name", what)
		}
		if problem := guidProblem(be.GUID); problem != "" {
			v.add("%s: guid %s", what, problem)
		} else {
			useGUID(be.GUID, what)
		}
		if pr, ok := profiles[be.Profile]; !ok {
			v.add("%s: profile %q not in plan", what, be.Profile)
		} else if pr.Mode != be.Mode {
			v.add("%s: mode %q differs from profile %s mode %q", what, be.Mode, pr.Name, pr.Mode)
		}
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
			v.server(swhat, s, useGUID)
		}
		backends[be.Name] = be
	}

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
		for j, e := range m.Entries {
			if problem := mapKeyProblem(e.Key); problem != "" {
				v.add("%s: entry %d: key %q %s", what, j+1, e.Key, problem)
			}
			if problem := mapValueProblem(e.Value); problem != "" {
				v.add("%s: entry %d: value %q %s", what, j+1, e.Value, problem)
			}
			if !m.Ordered && j > 0 && m.Entries[j-1].Key >= e.Key {
				if m.Entries[j-1].Key == e.Key {
					v.add("%s: key %q appears twice in an unordered map", what, e.Key)
				} else {
					v.add("%s: entry %d: unordered map entries not sorted by key", what, j+1)
				}
			}
		}
		f, ok := files[m.Path]
		switch {
		case !ok:
			v.add("%s: no file at its path", what)
		case f.Kind != FileMap:
			v.add("%s: file at its path has kind %q, want map", what, f.Kind)
		default:
			body := MapText(*m)
			if f.Size != len(body) || f.Digest != DigestOf(body) {
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

	v.sections(p, cfg, profiles, backends)
}

func (v *validator) server(what subject, s *Server, useGUID func(guid string, owner subject)) {
	var buf [64]byte
	if a, err := netip.ParseAddr(s.Address); err != nil {
		v.add("%s: address %q is not an IP address", what, s.Address)
	} else if a.Zone() != "" {
		v.add("%s: address %q has a zone", what, s.Address)
	} else if string(a.AppendTo(buf[:0])) != s.Address {
		v.add("%s: address %q is not in canonical form %q", what, s.Address, a.String())
	}
	if s.Port < 1 || s.Port > 65535 {
		v.add("%s: port %d out of range 1-65535", what, s.Port)
	}
	if s.Weight < 0 || s.Weight > MaxWeight {
		v.add("%s: weight %d out of range 0-%d", what, s.Weight, MaxWeight)
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
				useGUID(s.Keywords[k+1], what)
			}
		}
	}
}

func (v *validator) sections(p *Plan, cfg *File, profiles map[string]*Profile, backends map[string]*Backend) {
	offset := 0
	placedProfile := make(map[string]bool, len(p.Profiles))
	placedBackend := make(map[string]bool, len(p.Backends))
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
			be, ok := backends[s.Name]
			switch {
			case !ok:
				v.add("%s: backend not in plan", what)
			case placedBackend[s.Name]:
				v.add("backend %s: more than one section", s.Name)
			case !v.sectionsRendered:
				v.buf = appendBackendText(v.buf[:0], be)
				if s.Length != len(v.buf) || s.Digest != DigestOf(v.buf) {
					v.add("backend %s: section is not BackendText of the backend", s.Name)
				}
			}
			placedBackend[s.Name] = true
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
	for _, be := range p.Backends {
		if !placedBackend[be.Name] {
			v.add("backend %s: no section", be.Name)
		}
	}
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
