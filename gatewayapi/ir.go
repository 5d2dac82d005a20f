package gatewayapi

import (
	"cmp"
	"slices"
	"sort"
	"strconv"
	"strings"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// The map names of the render context. Keys and values are described in
// docs/gateway.md; the library declares one map file per name.
const (
	MapListeners     = "gw-listeners.map"      // host@port -> listener (exact; "*@port" for a listener without hostname)
	MapListenersWild = "gw-listeners-wild.map" // .suffix@port -> listener (map_end, longest first)
	MapHosts         = "gw-hosts.map"          // host@listener -> host key (exact; "*@listener" for any host)
	MapHostsWild     = "gw-hosts-wild.map"     // .suffix@listener -> host key (map_end, longest first)
	MapPathsExact    = "gw-paths-exact.map"    // hostkey+path -> route (Exact paths)
	MapPathsPrefixEq = "gw-paths-prefix-exact.map"
	MapPathsPrefix   = "gw-paths-prefix.map"  // hostkey+prefix+"/" -> route (map_beg)
	MapTLS           = "gw-tls.map"           // hostkey -> backend (TLS passthrough and terminate)
	MapTLSTerminate  = "gw-tls-terminate.map" // listener -> "1" for a listener that terminates TLS on a port that also passes TLS through
)

// mapNames lists every map of the context, in a fixed order: a map's
// place in it is its index in builder.maps.
var mapNames = [...]string{MapListeners, MapListenersWild, MapHosts, MapHostsWild, MapPathsExact, MapPathsPrefixEq, MapPathsPrefix, MapTLS, MapTLSTerminate}

// mapIndex is the place of map mapName in mapNames.
func mapIndex(mapName string) int {
	for i, n := range mapNames {
		if n == mapName {
			return i
		}
	}
	panic("gatewayapi: unknown map " + mapName)
}

// orderedMaps are the maps whose entries are tried in file order.
var orderedMaps = map[string]bool{MapListenersWild: true, MapHostsWild: true}

// renderContext is the routing model of one Gateway (see RenderContext).
type renderContext struct {
	Namespace string                  `json:"namespace"`
	Name      string                  `json:"name"`
	Frontends []*frontendIR           `json:"frontends"`
	Maps      map[string][]mapEntryIR `json:"maps"`
	Backends  []*backendSet           `json:"backends"`
}

type mapEntryIR struct {
	Key   string `json:"key"`
	Value string `json:"value"`
	// shaped, when set, is the entry's JSON-shaped form, kept with a
	// cached host key's output.
	shaped map[string]any
	// seq is the entry's place among its map's writes: where writes
	// share a key, the first one wins (see builder.add).
	seq int
}

// frontendIR is one listening port.
type frontendIR struct {
	Name     string `json:"name"`
	Port     int32  `json:"port"`
	Protocol string `json:"protocol"` // HTTP, HTTPS or TLS
	// Terminate is true for a TLS port whose listeners all terminate
	// TLS; Mixed for one with listeners of both modes (the passthrough
	// frontend hands the terminating listeners' connections to a second
	// frontend that terminates).
	Terminate bool          `json:"terminate"`
	Mixed     bool          `json:"mixed"`
	Listeners []string      `json:"listeners"`
	Certs     []crtLine     `json:"certs"`
	Groups    []*groupIR    `json:"groups"`
	Selectors []*selectorIR `json:"selectors"`
}

// crtLine is one crt-list line of an HTTPS frontend.
type crtLine struct {
	certificate
	SNI []string `json:"sni"`
}

// groupIR is a map value that needs conditions: its candidates are
// tried in order, the first whose conditions hold is selected.
type groupIR struct {
	ID         string         `json:"id"`
	Candidates []*candIR      `json:"candidates"`
	shaped     map[string]any // see mapEntryIR.shaped
}

type candIR struct {
	Selector  string       `json:"selector"`
	Method    string       `json:"method"`
	Headers   []valueMatch `json:"headers"`
	Query     []valueMatch `json:"query"`
	PathRegex string       `json:"pathRegex"`
}

// selectorIR is what a selected rule match does.
type selectorIR struct {
	ID      string      `json:"id"`
	Backend string      `json:"backend"` // backend name; "" when the rule redirects or has choices
	Actions []*actionIR `json:"actions"`
	// Choices, for a rule with backendRef-level filters, pick the
	// backend by weight: a request whose rand(Total) falls in [Lo, Hi)
	// goes to Backend.
	Choices []*choiceIR    `json:"choices"`
	Total   int64          `json:"total"`
	shaped  map[string]any // see mapEntryIR.shaped
}

// choiceIR is one weighted backend of a selector.
type choiceIR struct {
	Backend string `json:"backend"`
	Lo      int64  `json:"lo"`
	Hi      int64  `json:"hi"`
}

// actionIR is one HAProxy action of a selected match. Kinds:
// req-set, req-add, req-del, rsp-set, rsp-add, rsp-del (Name, Value),
// redirect (Format, Code), rest (N: keep the path after N bytes in
// txn.rest), path-full (Value), path-prefix (Format when txn.rest is not
// empty, Value when it is), cors-origin (Value: the regular expression
// an allowed Origin matches; it is kept in txn.cors), cors-preflight
// (Headers of the answer to a preflight from an allowed origin),
// cors-response (Headers added to the response to an allowed origin).
type actionIR struct {
	Kind   string `json:"kind"`
	Name   string `json:"name,omitempty"`
	Value  string `json:"value,omitempty"`
	Format string `json:"format,omitempty"`
	Code   int64  `json:"code,omitempty"`
	N      int64  `json:"n,omitempty"`
	// Headers are the header lines of the CORS kinds: name and a
	// log-format value.
	Headers []mapEntryIR `json:"headers,omitempty"`
}

// Static backends of the library: the ones a map value may name besides
// the backends of the context.
const (
	backend404 = "haptic-404"
	backend500 = "haptic-500"
)

// cand is one match of one rule of one route on one listener: the unit
// HTTP precedence orders.
type cand struct {
	m        *httpMatch
	rule     *httpRule
	r        *route
	l        *listener
	matchIdx int
}

// before is the HTTPRoute precedence: exact path, longer prefix, method,
// more headers, more query parameters, older route, namespace/name, rule
// order, match order.
func (c *cand) before(b *cand) bool {
	a := c
	ra, rb := pathRank(a.m.pathType), pathRank(b.m.pathType)
	if ra != rb {
		return ra < rb
	}
	if len(a.m.path) != len(b.m.path) && a.m.pathType != string(gatewayv1.PathMatchRegularExpression) {
		return len(a.m.path) > len(b.m.path)
	}
	if (a.m.method != "") != (b.m.method != "") {
		return a.m.method != ""
	}
	if len(a.m.headers) != len(b.m.headers) {
		return len(a.m.headers) > len(b.m.headers)
	}
	if len(a.m.query) != len(b.m.query) {
		return len(a.m.query) > len(b.m.query)
	}
	if a.r != b.r {
		return a.r.olderThan(b.r)
	}
	if a.rule.index != b.rule.index {
		return a.rule.index < b.rule.index
	}
	return a.matchIdx < b.matchIdx
}

func pathRank(t string) int {
	switch t {
	case string(gatewayv1.PathMatchExact):
		return 0
	case string(gatewayv1.PathMatchPathPrefix):
		return 1
	}
	return 2
}

// selectorID is stable across renders, so that adding a route changes
// no other route's lines.
func (c *cand) selectorID() string {
	return "s" + shortID(c.l.name, c.r.kind, c.r.ref.Namespace, c.r.ref.Name, strconv.Itoa(c.rule.index), strconv.Itoa(c.matchIdx))
}

// plain says whether a request that reaches c needs nothing but its
// backend: then a map value names the backend directly.
func (c *cand) plain() bool {
	return !c.m.conditional() && len(c.rule.filters) == 0 && (c.rule.fail || len(c.rule.choices) == 0)
}

func (c *cand) backendName() string {
	if c.rule.fail || c.rule.backend == nil {
		return backend500
	}
	return c.rule.backend.Name
}

// builder accumulates one Gateway's context.
type builder struct {
	ctx *renderContext
	// maps are the context's maps while they are written, by index of
	// mapNames; backends the backends by name.
	maps     [len(mapNames)][]mapEntryIR
	backends map[string]*backendSet
	// cache, when set, keeps each host key's output and the backend
	// order for the next Build, in kept (for this Gateway); rec records
	// the host key being computed.
	cache *Cache
	kept  *gatewayState
	rec   *hostOutput
	// scratch holds the working slices and maps, the cache's when there
	// is one.
	scratch *buildScratch
}

// buildScratch is what one buildContext works in and drops once the
// context is shaped: the entries of the maps, the candidates and host
// states of the HTTP routes. At thousands of routes it is most of what a
// Build allocates, so a Cache keeps it from one Build to the next (Builds
// that share a Cache take turns); [buildScratch.release] empties it so
// that it holds nothing of the Build that used it.
type buildScratch struct {
	maps     [len(mapNames)][]mapEntryIR
	backends map[string]*backendSet
	hosts    map[string]int32 // host key → index in states
	cands    []cand
	lists    []*cand // the states' candidate lists
	states   []hostState
	froms    []*attachedRoute // the states' route lists
	at       []int32
}

func newBuildScratch() *buildScratch {
	return &buildScratch{backends: map[string]*backendSet{}, hosts: map[string]int32{}}
}

// release empties s for the next buildContext, keeping its capacity.
func (s *buildScratch) release(b *builder) {
	for i := range s.maps {
		s.maps[i] = b.maps[i][:0] // b.maps may have grown
		clear(s.maps[i][:cap(s.maps[i])])
	}
	clear(s.backends)
	clear(s.hosts)
	clear(s.cands[:cap(s.cands)])
	s.cands = s.cands[:0]
	clear(s.lists[:cap(s.lists)])
	s.lists = s.lists[:0]
	clear(s.states[:cap(s.states)])
	s.states = s.states[:0]
	clear(s.froms[:cap(s.froms)])
	s.froms = s.froms[:0]
	s.at = s.at[:0]
}

func (b *builder) entry(mapName, key, value string) {
	e := mapEntryIR{Key: key, Value: value}
	m := mapIndex(mapName)
	if b.rec != nil {
		e.shaped = e.shape(mapName)
		b.rec.entries = append(b.rec.entries, recordedEntry{m: m, e: e})
	}
	b.add(m, e)
}

// add writes e into map m (an index of mapNames). Of the writes of one
// key the first wins (callers write in precedence order): sortMaps
// keeps it and drops the others, which costs a Build less than a set of
// the keys written.
func (b *builder) add(m int, e mapEntryIR) {
	e.seq = len(b.maps[m])
	b.maps[m] = append(b.maps[m], e)
}

// sortMaps puts the entries of each map in file order (longest key
// first for the maps tried in order, else by key) and keeps the first
// write of each key.
func (b *builder) sortMaps() {
	for i, es := range b.maps {
		ordered := orderedMaps[mapNames[i]]
		slices.SortFunc(es, func(x, y mapEntryIR) int {
			if ordered && len(x.Key) != len(y.Key) {
				return cmp.Compare(len(y.Key), len(x.Key))
			}
			if c := strings.Compare(x.Key, y.Key); c != 0 {
				return c
			}
			return cmp.Compare(x.seq, y.seq)
		})
		b.maps[i] = slices.CompactFunc(es, func(x, y mapEntryIR) bool { return x.Key == y.Key })
	}
}

// hostKey is the key that names one hostname of one listener in the
// path maps.
func hostKey(l *listener, host string) string { return l.name + "|" + host }

// hostEntries writes the lookups that lead from a request's host on
// the listener's port (or listener) to a key.
func (b *builder) hostEntries(exactMap, wildMap, host, suffix, value string) {
	switch {
	case host == "" || host == "*":
		b.entry(exactMap, "*@"+suffix, value)
	case strings.HasPrefix(host, "*."):
		b.entry(wildMap, host[1:]+"@"+suffix, value)
	default:
		b.entry(exactMap, host+"@"+suffix, value)
	}
}

// buildContext computes the render context of g, reusing the output of
// unchanged host keys from c when it is not nil.
func (g *gateway) buildContext(c *Cache) map[string]any {
	b := &builder{
		ctx:   &renderContext{Namespace: g.ref.Namespace, Name: g.ref.Name, Maps: map[string][]mapEntryIR{}},
		cache: c,
	}
	if c != nil {
		if c.scratch == nil {
			c.scratch = newBuildScratch()
		}
		b.scratch = c.scratch
		defer b.scratch.release(b)
		b.kept = c.gateway(g.ref)
	} else {
		b.scratch = newBuildScratch()
	}
	b.backends = b.scratch.backends
	b.maps = b.scratch.maps
	// Frontends: one per port with at least one listener that carries
	// routes.
	byPort := map[int32]*frontendIR{}
	var ports []int32
	for _, l := range g.listeners {
		if !l.acceptsRoutes {
			continue
		}
		fe := byPort[l.port]
		if fe == nil {
			fe = &frontendIR{Name: "gw-" + itoa(l.port), Port: l.port, Protocol: l.protocol, Terminate: l.terminate, Listeners: []string{}, Certs: []crtLine{}, Groups: []*groupIR{}, Selectors: []*selectorIR{}}
			byPort[l.port] = fe
			ports = append(ports, l.port)
		}
		fe.Listeners = append(fe.Listeners, l.name)
		if fe.Protocol == "TLS" && l.terminate != fe.Terminate {
			fe.Mixed, fe.Terminate = true, false
		}
		b.hostEntries(MapListeners, MapListenersWild, l.hostname, itoa(l.port), l.name)
	}
	sort.Slice(ports, func(i, j int) bool { return ports[i] < ports[j] })
	for _, p := range ports {
		fe := byPort[p]
		sort.Strings(fe.Listeners)
		if fe.Mixed {
			for _, l := range g.listeners {
				if l.acceptsRoutes && l.port == p && l.terminate {
					b.entry(MapTLSTerminate, l.name, "1")
				}
			}
		}
		if fe.Protocol == "HTTPS" || fe.Terminate || fe.Mixed {
			fe.Certs = certLines(g.listeners, p)
		}
		b.ctx.Frontends = append(b.ctx.Frontends, fe)
	}
	if b.ctx.Frontends == nil {
		b.ctx.Frontends = []*frontendIR{}
	}

	b.http(g, byPort)
	b.tls(g)

	b.ctx.Backends = b.sortedBackends()
	b.sortMaps()
	for i, n := range mapNames {
		b.ctx.Maps[n] = b.maps[i]
	}
	return b.ctx.shape()
}

// sortedBackends returns the backends of the context sorted by name.
// With a cache it starts from the previous Build's order for the same
// Gateway: the backends still there keep their places and the new ones
// are sorted and merged in, so that a Build sorts only what changed.
func (b *builder) sortedBackends() []*backendSet {
	byName := func(x, y *backendSet) int { return strings.Compare(x.Name, y.Name) }
	out := make([]*backendSet, 0, len(b.backends))
	if b.cache == nil {
		for _, bs := range b.backends {
			out = append(out, bs)
		}
		slices.SortFunc(out, byName)
		return out
	}
	c := b.cache
	c.sorts++ // a backend may be in the contexts of several Gateways
	for _, bs := range b.kept.order {
		if b.backends[bs.Name] == bs {
			bs.sort = c.sorts
			out = append(out, bs)
		}
	}
	if len(out) < len(b.backends) {
		var added []*backendSet
		for _, bs := range b.backends {
			if bs.sort != c.sorts {
				added = append(added, bs)
			}
		}
		slices.SortFunc(added, byName)
		out = mergeSorted(out, added, byName)
	}
	b.kept.order = out
	return out
}

// mergeSorted merges the sorted lists a and b.
func mergeSorted[T any](a, b []T, cmp func(x, y T) int) []T {
	out := make([]T, 0, len(a)+len(b))
	for len(a) > 0 && len(b) > 0 {
		if cmp(b[0], a[0]) < 0 {
			out, b = append(out, b[0]), b[1:]
		} else {
			out, a = append(out, a[0]), a[1:]
		}
	}
	return append(append(out, a...), b...)
}

// certLines lists the crt-list lines of an HTTPS port: listeners without
// hostname first (the first line is HAProxy's default certificate), then
// the others with their hostname as SNI filter.
func certLines(ls []*listener, port int32) []crtLine {
	var any, named []crtLine
	for _, l := range ls {
		if !l.acceptsRoutes || l.port != port {
			continue
		}
		for _, c := range l.certs {
			if l.hostname == "" {
				any = append(any, crtLine{certificate: c, SNI: []string{}})
			} else {
				named = append(named, crtLine{certificate: c, SNI: []string{l.hostname}})
			}
		}
	}
	return append(any, named...)
}

// http writes the host and path maps, groups and selectors of the HTTP
// and gRPC routes of g.
func (b *builder) http(g *gateway, byPort map[int32]*frontendIR) {
	attached := append(append([]*attachedRoute(nil), g.http...), g.grpc...)
	states := b.hostStates(g, attached)
	var hosts map[string]*hostOutput
	if b.kept != nil {
		hosts = b.kept.hosts
	}
	for i := range states {
		st := &states[i]
		hk := st.key
		fe := byPort[st.l.port]
		if b.cache == nil {
			b.candidates(g, st)
			b.hostKey(hk, st, fe)
			continue
		}
		lsig := listenerSig{name: st.l.name, protocol: st.l.protocol, port: st.l.port}
		o := hosts[hk]
		// The very attachments of the last Build (see attachMemo) bring
		// the same candidates: nothing to compare but them.
		if o != nil && o.listener == lsig && slices.Equal(o.from, st.from) {
			b.replay(o, fe)
			o.used = b.cache.builds
			continue
		}
		b.candidates(g, st)
		if o != nil && o.same(lsig, st.all) {
			b.replay(o, fe)
			o.used, o.from = b.cache.builds, slices.Clone(st.from)
			continue
		}
		o = &hostOutput{listener: lsig, from: slices.Clone(st.from), cands: make([]candSig, 0, len(st.all)), used: b.cache.builds}
		for _, c := range st.all {
			o.cands = append(o.cands, candSig{rule: c.rule, matchIdx: c.matchIdx})
		}
		g0, s0 := len(fe.Groups), len(fe.Selectors)
		b.rec = o
		b.hostKey(hk, st, fe)
		b.rec = nil
		o.groups = append([]*groupIR(nil), fe.Groups[g0:]...)
		o.selectors = append([]*selectorIR(nil), fe.Selectors[s0:]...)
		for _, gr := range o.groups {
			gr.shaped = gr.shape()
		}
		for _, sel := range o.selectors {
			sel.shaped = sel.shape()
		}
		for _, bs := range o.backends {
			if bs.shaped == nil {
				bs.shaped = bs.shape()
			}
		}
		hosts[hk] = o
	}
	if b.cache != nil {
		b.cache.sweepHosts(hosts, len(states))
	}
	for _, fe := range byPort {
		slices.SortFunc(fe.Groups, func(x, y *groupIR) int { return strings.Compare(x.ID, y.ID) })
		slices.SortFunc(fe.Selectors, func(x, y *selectorIR) int { return strings.Compare(x.ID, y.ID) })
	}
}

// hostStates groups the attached HTTP and gRPC routes by host key, in
// attachment order, and returns the host keys sorted. The states and
// their lists come from the scratch slabs: two passes, the first
// counting, make them one allocation each rather than one per value.
func (b *builder) hostStates(g *gateway, attached []*attachedRoute) []hostState {
	byKey := b.scratch.hosts
	var nCands, nHosts int
	for _, a := range attached {
		if hr := a.r.httpRules(); hr != nil {
			nCands += hr.nMatches * len(a.hosts)
			nHosts += len(a.hosts)
		}
	}
	states := slices.Grow(b.scratch.states, nHosts)
	at := slices.Grow(b.scratch.at, nHosts) // the state of each attached host, in order
	for _, a := range attached {
		if a.r.httpRules() == nil {
			continue
		}
		for i, h := range a.hosts {
			hk := a.keys[i]
			si, ok := byKey[hk]
			if !ok {
				si = int32(len(states))
				states = append(states, hostState{l: g.listeners[a.li], host: h, key: hk})
				byKey[hk] = si
			}
			states[si].n++
			at = append(at, si)
		}
	}
	froms := slices.Grow(b.scratch.froms, nHosts)[:nHosts]
	off := 0
	for i := range states {
		st := &states[i]
		st.from, off = froms[off:off:off+st.n], off+st.n
	}
	k := 0
	for _, a := range attached {
		if a.r.httpRules() == nil {
			continue
		}
		for range a.hosts {
			st := &states[at[k]]
			k++
			st.from = append(st.from, a)
		}
	}
	slices.SortFunc(states, func(x, y hostState) int { return strings.Compare(x.key, y.key) })
	// Room for every candidate: those that candidates makes stay where
	// they are while others are made.
	b.scratch.cands = slices.Grow(b.scratch.cands, nCands)
	b.scratch.lists = slices.Grow(b.scratch.lists, nCands)
	b.scratch.states, b.scratch.at, b.scratch.froms = states, at, froms
	return states
}

// candidates makes st.all: the rule matches of the routes that reach st,
// in attachment order, from the scratch slabs.
func (b *builder) candidates(g *gateway, st *hostState) {
	s := b.scratch
	start := len(s.lists)
	for _, a := range st.from {
		l := g.listeners[a.li]
		for _, rule := range a.r.httpRules().rules {
			for i := range rule.matches {
				s.cands = append(s.cands, cand{m: &rule.matches[i], rule: rule, r: a.r, l: l, matchIdx: i})
				s.lists = append(s.lists, &s.cands[len(s.cands)-1])
			}
		}
	}
	st.all = s.lists[start:len(s.lists):len(s.lists)]
}

// hostState is what reaches one host key: its listener, the routes
// attached there (n counts them while hostStates groups them) and, once
// candidates made them, their rule matches, in attachment order until
// hostKey sorts them.
type hostState struct {
	l    *listener
	host string
	key  string
	from []*attachedRoute
	n    int
	all  []*cand
}

// replay writes the cached output o of a host key as hostKey wrote it.
func (b *builder) replay(o *hostOutput, fe *frontendIR) {
	for _, r := range o.entries {
		b.add(r.m, r.e)
	}
	fe.Groups = append(fe.Groups, o.groups...)
	fe.Selectors = append(fe.Selectors, o.selectors...)
	for _, bs := range o.backends {
		b.backends[bs.Name] = bs
	}
}

// hostKey writes the path map entries, groups and selectors of host key
// hk of frontend fe.
func (b *builder) hostKey(hk string, st *hostState, fe *frontendIR) {
	// The host key's own entry: no other host key writes its key.
	b.hostEntries(MapHosts, MapHostsWild, st.host, st.l.name, hk)
	exactPaths, prefixPaths := map[string][]*cand{}, map[string][]*cand{}
	var regex []*cand
	sort.SliceStable(st.all, func(i, j int) bool { return st.all[i].before(st.all[j]) })
	for _, c := range st.all {
		switch c.m.pathType {
		case string(gatewayv1.PathMatchExact):
			exactPaths[c.m.path] = append(exactPaths[c.m.path], c)
		case string(gatewayv1.PathMatchPathPrefix):
			prefixPaths[c.m.path] = append(prefixPaths[c.m.path], c)
		default:
			regex = append(regex, c)
		}
	}
	sels := map[string]bool{}
	groups := map[string]bool{}
	emit := func(mapName, key, group string, list []*cand) {
		if len(list) == 1 && list[0].plain() {
			b.useBackend(list[0])
			b.entry(mapName, key, list[0].backendName())
			return
		}
		gid := "~" + shortID(group)
		b.entry(mapName, key, gid)
		if groups[gid] {
			return
		}
		groups[gid] = true
		grp := &groupIR{ID: gid}
		for _, c := range list {
			sel := c.selectorID()
			grp.Candidates = append(grp.Candidates, &candIR{Selector: sel, Method: c.m.method, Headers: nonNil(c.m.headers), Query: nonNil(c.m.query), PathRegex: pathRegex(c.m)})
			if !sels[sel] {
				sels[sel] = true
				fe.Selectors = append(fe.Selectors, b.selector(c, sel))
			}
		}
		fe.Groups = append(fe.Groups, grp)
	}
	// chain returns the candidates a request for path p tries, in
	// order, up to the first one without conditions.
	chain := func(p string, exact bool) []*cand {
		var out []*cand
		add := func(cs []*cand) bool {
			for _, c := range cs {
				out = append(out, c)
				if !c.m.conditional() {
					return true
				}
			}
			return false
		}
		if exact && add(exactPaths[p]) {
			return out
		}
		for q := p; ; {
			if add(prefixPaths[q]) {
				return out
			}
			if q == "/" {
				break
			}
			i := strings.LastIndexByte(q, '/')
			if i <= 0 {
				q = "/"
			} else {
				q = q[:i]
			}
		}
		add(regex)
		return out
	}
	for _, p := range sortedKeys(exactPaths) {
		emit(MapPathsExact, hk+p, hk+" exact "+p, chain(p, true))
	}
	for _, p := range sortedKeys(prefixPaths) {
		list := chain(p, false)
		if p != "/" {
			emit(MapPathsPrefixEq, hk+p, hk+" prefix "+p, list)
			emit(MapPathsPrefix, hk+p+"/", hk+" prefix "+p, list)
		} else {
			emit(MapPathsPrefix, hk+"/", hk+" prefix /", list)
		}
	}
	if len(regex) > 0 && len(prefixPaths["/"]) == 0 {
		// Requests no path map matches still try the regular
		// expressions: the root prefix of the host key leads there.
		emit(MapPathsPrefix, hk+"/", hk+" prefix /", chain("/", false))
	}
}

func nonNil(v []valueMatch) []valueMatch {
	if v == nil {
		return []valueMatch{}
	}
	return v
}

func pathRegex(m *httpMatch) string {
	if m.pathType == string(gatewayv1.PathMatchRegularExpression) {
		return m.path
	}
	return ""
}

func sortedKeys(m map[string][]*cand) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func (b *builder) useBackend(c *cand) {
	if c.rule.fail || c.rule.backend == nil {
		return
	}
	b.keepBackend(c.rule.backend)
}

// keepBackend puts bs in the context (recording it for the host key's
// cached output).
func (b *builder) keepBackend(bs *backendSet) {
	b.backends[bs.Name] = bs
	if b.rec != nil {
		b.rec.backends = append(b.rec.backends, bs)
	}
}

// selector builds what a selected candidate does.
func (b *builder) selector(c *cand, id string) *selectorIR {
	s := &selectorIR{ID: id, Actions: []*actionIR{}}
	redirect := false
	for _, f := range c.rule.filters {
		switch f.Type {
		case gatewayv1.HTTPRouteFilterRequestHeaderModifier:
			s.Actions = append(s.Actions, headerActions("req", f.RequestHeaderModifier)...)
		case gatewayv1.HTTPRouteFilterResponseHeaderModifier:
			s.Actions = append(s.Actions, headerActions("rsp", f.ResponseHeaderModifier)...)
		case gatewayv1.HTTPRouteFilterRequestRedirect:
			redirect = true
			s.Actions = append(s.Actions, redirectActions(c, f.RequestRedirect)...)
		case gatewayv1.HTTPRouteFilterCORS:
			s.Actions = append(s.Actions, corsActions(f.CORS)...)
		case gatewayv1.HTTPRouteFilterURLRewrite:
			rw := f.URLRewrite
			if rw.Hostname != nil {
				s.Actions = append(s.Actions, &actionIR{Kind: "req-set", Name: "host", Value: string(*rw.Hostname)})
			}
			if p := rw.Path; p != nil {
				switch p.Type {
				case gatewayv1.FullPathHTTPPathModifier:
					s.Actions = append(s.Actions, &actionIR{Kind: "path-full", Value: *p.ReplaceFullPath})
				case gatewayv1.PrefixMatchHTTPPathModifier:
					s.Actions = append(s.Actions, prefixActions(c.m, *p.ReplacePrefixMatch)...)
				}
			}
		}
	}
	switch {
	case redirect:
	case !c.rule.fail && len(c.rule.choices) > 0:
		for _, ch := range c.rule.choices {
			name := backend500
			if ch.backend != nil {
				name = ch.backend.Name
				b.keepBackend(ch.backend)
			}
			s.Choices = append(s.Choices, &choiceIR{Backend: name, Lo: s.Total, Hi: s.Total + ch.weight})
			s.Total += ch.weight
		}
	default:
		s.Backend = c.backendName()
		b.useBackend(c)
	}
	return s
}

func headerActions(dir string, h *gatewayv1.HTTPHeaderFilter) []*actionIR {
	var out []*actionIR
	for _, x := range h.Set {
		out = append(out, &actionIR{Kind: dir + "-set", Name: string(x.Name), Value: x.Value})
	}
	for _, x := range h.Add {
		out = append(out, &actionIR{Kind: dir + "-add", Name: string(x.Name), Value: x.Value})
	}
	for _, n := range h.Remove {
		out = append(out, &actionIR{Kind: dir + "-del", Name: n})
	}
	return out
}

// prefixActions replace the matched prefix of the path with repl: the
// rest of the path (after the prefix) is kept in txn.rest first.
func prefixActions(m *httpMatch, repl string) []*actionIR {
	n := int64(len(m.path))
	if m.path == "/" {
		n = 0
	}
	trimmed := strings.TrimRight(repl, "/")
	empty := repl
	if trimmed == "" {
		empty = "/"
	}
	return []*actionIR{
		{Kind: "rest", N: n},
		{Kind: "path-prefix", Format: formatLiteral(trimmed) + "%[var(txn.rest)]", Value: empty},
	}
}

// redirectActions build the Location of a RequestRedirect as the API
// derives it: scheme and host of the request unless set, the listener's
// port unless a scheme or port is set, no port when it is the scheme's
// default, the request path (and query) unless a path modifier is set.
func redirectActions(c *cand, rd *gatewayv1.HTTPRequestRedirectFilter) []*actionIR {
	scheme := "http"
	if c.l.protocol == "HTTPS" {
		scheme = "https"
	}
	port := int64(c.l.port)
	if rd.Scheme != nil {
		scheme = *rd.Scheme
		port = map[string]int64{"http": 80, "https": 443}[scheme]
	}
	if rd.Port != nil {
		port = int64(*rd.Port)
	}
	host := "%[var(txn.host)]"
	if rd.Hostname != nil {
		host = formatLiteral(string(*rd.Hostname))
	}
	loc := scheme + "://" + host
	defaultPort := scheme == "http" && port == 80 || scheme == "https" && port == 443
	if !defaultPort {
		loc += ":" + strconv.FormatInt(port, 10)
	}
	var out []*actionIR
	switch {
	case rd.Path == nil:
		loc += "%[pathq]"
	case rd.Path.Type == gatewayv1.FullPathHTTPPathModifier:
		loc += formatLiteral(*rd.Path.ReplaceFullPath)
	case rd.Path.Type == gatewayv1.PrefixMatchHTTPPathModifier:
		acts := prefixActions(c.m, *rd.Path.ReplacePrefixMatch)
		out = append(out, acts[0])
		trimmed := strings.TrimRight(*rd.Path.ReplacePrefixMatch, "/")
		loc += formatLiteral(trimmed) + "%[var(txn.rest)]"
	}
	code := int64(302)
	if rd.StatusCode != nil {
		code = int64(*rd.StatusCode)
	}
	return append(out, &actionIR{Kind: "redirect", Format: loc, Code: code})
}

// tls writes the SNI lookups of the TLS passthrough routes of g: for
// each host key, the backend of the oldest route.
func (b *builder) tls(g *gateway) {
	attached := append([]*attachedRoute(nil), g.tls...)
	sort.SliceStable(attached, func(i, j int) bool { return attached[i].r.olderThan(attached[j].r) })
	for _, a := range attached {
		if a.r.tls == nil {
			continue
		}
		l := g.listeners[a.li]
		for i, h := range a.hosts {
			hk := a.keys[i]
			b.hostEntries(MapHosts, MapHostsWild, h, l.name, hk)
			// A route without a backend that resolves gets no entry: its
			// connections are rejected, as the API asks.
			if bs := a.r.tls.backend; bs != nil {
				b.backends[bs.Name] = bs
				b.entry(MapTLS, hk, bs.Name)
			}
		}
	}
}
