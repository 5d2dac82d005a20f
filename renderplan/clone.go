package renderplan

import "slices"

// Clone returns a deep copy of p that shares no memory with it; a nil plan
// clones to nil. Use it to derive a changed plan from a built one.
func (p *Plan) Clone() *Plan {
	if p == nil {
		return nil
	}
	c := *p
	c.Sections = slices.Clone(p.Sections)
	c.Profiles = slices.Clone(p.Profiles)
	c.Maps = slices.Clone(p.Maps)
	for i := range c.Maps {
		c.Maps[i].Entries = slices.Clone(c.Maps[i].Entries)
	}
	c.Files = slices.Clone(p.Files)
	if p.Backends != nil {
		c.Backends = make([]Backend, len(p.Backends))
		cp := newBackendCopier(p.Backends)
		for i := range p.Backends {
			cp.copy(&c.Backends[i], &p.Backends[i])
		}
	}
	return &c
}

// clone returns a deep copy of be.
func (be Backend) clone() Backend {
	be.Body = slices.Clone(be.Body)
	be.Servers = slices.Clone(be.Servers)
	for i := range be.Servers {
		be.Servers[i].Keywords = slices.Clone(be.Servers[i].Keywords)
	}
	return be
}

// backendCopier deep-copies many backends like [Backend.clone], but with
// one allocation for all their servers and one for all their body lines
// and keywords. Each copied slice is capped at its length, so appending
// to one never writes into its neighbour; nil stays nil and empty stays
// empty, as with slices.Clone.
type backendCopier struct {
	servers []Server
	strs    []string
}

// newBackendCopier returns a copier with room for the slices of bs.
func newBackendCopier(bs []Backend) backendCopier {
	var n backendCopySize
	for i := range bs {
		n.add(&bs[i])
	}
	return n.copier()
}

// backendCopySize counts the servers and strings of the backends a
// copier is made for.
type backendCopySize struct{ servers, strs int }

func (n *backendCopySize) add(be *Backend) {
	n.servers += len(be.Servers)
	n.strs += len(be.Body)
	for j := range be.Servers {
		n.strs += len(be.Servers[j].Keywords)
	}
}

// copier returns a copier with room for the backends counted.
func (n backendCopySize) copier() backendCopier {
	return backendCopier{servers: make([]Server, n.servers), strs: make([]string, n.strs)}
}

// copy sets *dst to a deep copy of *src, one of the backends the copier
// was made for.
func (c *backendCopier) copy(dst, src *Backend) {
	*dst = *src
	dst.Body = c.strings(src.Body)
	if src.Servers != nil {
		n := len(src.Servers)
		servers := c.servers[:n:n]
		c.servers = c.servers[n:]
		copy(servers, src.Servers)
		for i := range servers {
			servers[i].Keywords = c.strings(servers[i].Keywords)
		}
		dst.Servers = servers
	}
}

func (c *backendCopier) strings(src []string) []string {
	if src == nil {
		return nil
	}
	n := len(src)
	dst := c.strs[:n:n]
	c.strs = c.strs[n:]
	copy(dst, src)
	return dst
}

// Equal reports whether p and q are the same plan: whether their canonical
// encodings are equal (nil and empty slices count as equal). Two nil plans
// are equal; a nil and a non-nil plan are not.
func (p *Plan) Equal(q *Plan) bool {
	if p == nil || q == nil {
		return p == q
	}
	return p.Schema == q.Schema && p.BufSize == q.BufSize &&
		slices.Equal(p.Sections, q.Sections) &&
		slices.Equal(p.Profiles, q.Profiles) &&
		slices.EqualFunc(p.Backends, q.Backends, Backend.equal) &&
		slices.EqualFunc(p.Maps, q.Maps, func(a, b Map) bool {
			return a.Path == b.Path && a.Ordered == b.Ordered && slices.Equal(a.Entries, b.Entries)
		}) &&
		slices.Equal(p.Files, q.Files)
}

func (be Backend) equal(o Backend) bool {
	return be.Name == o.Name && be.GUID == o.GUID && be.Profile == o.Profile &&
		be.Mode == o.Mode && be.Shape == o.Shape && be.ShapeReason == o.ShapeReason &&
		slices.Equal(be.Body, o.Body) &&
		slices.EqualFunc(be.Servers, o.Servers, Server.Equal)
}

// Equal reports whether s and o are the same server; nil and empty
// Keywords count as equal.
func (s Server) Equal(o Server) bool {
	return s.Name == o.Name && s.Address == o.Address && s.Port == o.Port &&
		s.Weight == o.Weight && s.Disabled == o.Disabled && s.Check == o.Check &&
		slices.Equal(s.Keywords, o.Keywords)
}
