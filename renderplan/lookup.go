package renderplan

import (
	"slices"
	"strings"
)

// Backend returns the backend with the given name. It relies on
// p.Backends being sorted by name, as in every built or valid plan. The
// pointer aliases the plan: read it, do not modify it.
func (p *Plan) Backend(name string) (*Backend, bool) {
	i, ok := slices.BinarySearchFunc(p.Backends, name, func(b Backend, n string) int { return strings.Compare(b.Name, n) })
	if !ok {
		return nil, false
	}
	return &p.Backends[i], true
}

// Profile returns the profile with the given name (p.Profiles sorted by
// name). The pointer aliases the plan.
func (p *Plan) Profile(name string) (*Profile, bool) {
	i, ok := slices.BinarySearchFunc(p.Profiles, name, func(x Profile, n string) int { return strings.Compare(x.Name, n) })
	if !ok {
		return nil, false
	}
	return &p.Profiles[i], true
}

// Map returns the map at the given path (p.Maps sorted by path). The
// pointer aliases the plan.
func (p *Plan) Map(path string) (*Map, bool) {
	i, ok := slices.BinarySearchFunc(p.Maps, path, func(m Map, s string) int { return strings.Compare(m.Path, s) })
	if !ok {
		return nil, false
	}
	return &p.Maps[i], true
}

// File returns the file at the given path (p.Files sorted by path). The
// pointer aliases the plan.
func (p *Plan) File(path string) (*File, bool) {
	i, ok := slices.BinarySearchFunc(p.Files, path, func(f File, s string) int { return strings.Compare(f.Path, s) })
	if !ok {
		return nil, false
	}
	return &p.Files[i], true
}

// Server returns the server with the given name (be.Servers sorted by
// name). The pointer aliases the backend.
func (be *Backend) Server(name string) (*Server, bool) {
	i, ok := slices.BinarySearchFunc(be.Servers, name, func(s Server, n string) int { return strings.Compare(s.Name, n) })
	if !ok {
		return nil, false
	}
	return &be.Servers[i], true
}

// CoreDigest is the digest over the digests of all core sections, in file
// order. It changes when the text outside profiles and backends changes,
// or when that text moves between core sections; it is what a diff
// compares to tell "core changed".
func (p *Plan) CoreDigest() Digest {
	var b strings.Builder
	for _, s := range p.Sections {
		if s.Kind == SectionCore {
			b.WriteString(string(s.Digest))
			b.WriteByte('\n')
		}
	}
	return DigestString(b.String())
}
