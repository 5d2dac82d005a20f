package gatewayapi

import (
	"slices"
	"sync"
)

// Cache keeps what one [Build] computed, so that the next Build of a
// store where few objects changed redoes only the work those changes
// touch:
//
//   - the typed form of each object, keyed by alias, namespace, name and
//     metadata.resourceVersion (an object without resourceVersion, as
//     manifests from files may be, is decoded every time);
//   - each route as resolved (rules normalized, backendRefs resolved to
//     backend sets, ResolvedRefs), under the same key, with the Services
//     and ReferenceGrants its resolution read: the entry is reused only
//     while those read the same;
//   - for each host key of each Gateway, the map entries, groups,
//     selectors and backends its rule matches became, reused while the
//     same rules (the same resolved routes) reach that host key on an
//     unchanged listener, together with their JSON-shaped form.
//
// Each Build forgets the entries its store no longer holds. A Cache is
// safe for concurrent use; Builds that share one take turns on it. The
// zero value is ready to use.
type Cache struct {
	mu      sync.Mutex
	entries map[cacheKey]any
	next    map[cacheKey]any

	routes     map[cacheKey]*routeEntry
	nextRoutes map[cacheKey]*routeEntry

	hosts     map[hostCacheKey]*hostOutput
	nextHosts map[hostCacheKey]*hostOutput
}

type cacheKey struct {
	alias, namespace, name, resourceVersion string
}

// begin starts one Build's use of the cache.
func (c *Cache) begin() {
	c.mu.Lock()
	c.next = make(map[cacheKey]any, len(c.entries))
	c.nextRoutes = make(map[cacheKey]*routeEntry, len(c.routes))
	c.nextHosts = make(map[hostCacheKey]*hostOutput, len(c.hosts))
}

// end keeps the entries this Build used and drops the others.
func (c *Cache) end() {
	c.entries, c.next = c.next, nil
	c.routes, c.nextRoutes = c.nextRoutes, nil
	c.hosts, c.nextHosts = c.nextHosts, nil
	c.mu.Unlock()
}

func (c *Cache) get(k cacheKey) (any, bool) {
	v, ok := c.entries[k]
	if ok {
		c.next[k] = v
	}
	return v, ok
}

func (c *Cache) put(k cacheKey, v any) { c.next[k] = v }

// routeEntry is one resolved route and what its resolution read.
type routeEntry struct {
	// r is the template: Build attaches copies of it, never r itself.
	r    *route
	deps routeDeps
}

// routeDeps are the lookups of one route's resolution.
type routeDeps struct {
	services []serviceDep
	// grants is set when the resolution consulted the ReferenceGrants;
	// grantsSig is what they were then.
	grants    bool
	grantsSig string
}

// serviceDep is one Service lookup: the ports found, or found false.
type serviceDep struct {
	ref   Ref
	found bool
	ports []servicePort
}

// still says whether the lookups of d read the same in w.
func (d *routeDeps) still(w *world) bool {
	if d.grants && (!w.grantsStable || d.grantsSig != w.grantsSig) {
		return false
	}
	for _, s := range d.services {
		ports, ok := w.services[s.ref]
		if ok != s.found || !slices.Equal(ports, s.ports) {
			return false
		}
	}
	return true
}

// resolve returns the route of an object of the given kind with
// metadata md, through the cache when there is one: a copy of the cached
// template when its object and lookups are unchanged, else fresh from f
// (and cached).
func (w *world) resolve(kind, namespace, name, resourceVersion string, f func() *route) *route {
	c := w.opts.Cache
	if c == nil || resourceVersion == "" {
		return f()
	}
	key := cacheKey{alias: kind, namespace: namespace, name: name, resourceVersion: resourceVersion}
	e := c.routes[key]
	if e == nil || !e.deps.still(w) {
		w.rec = &routeDeps{}
		r := f()
		e = &routeEntry{r: r, deps: *w.rec}
		w.rec = nil
		if e.deps.grants && !w.grantsStable {
			// Grants without resourceVersion cannot be compared: this
			// route is resolved again next time.
			cp := *r
			return &cp
		}
	}
	c.nextRoutes[key] = e
	cp := *e.r
	return &cp
}

// hostCacheKey names one host key of one Gateway.
type hostCacheKey struct {
	gateway Ref
	hostKey string
}

// hostOutput is what the rule matches reaching one host key became, and
// the inputs that decide it: the listener and the candidates in
// attachment order.
type hostOutput struct {
	listener  listenerSig
	cands     []candSig
	entries   []recordedEntry
	groups    []*groupIR
	selectors []*selectorIR
	backends  []*backendSet
}

// listenerSig is what of a listener the per-host output reads.
type listenerSig struct {
	name, protocol string
	port           int32
}

// candSig is one candidate: a match of a resolved rule. Rules belong to
// cached route templates, so the same pointer is the same rule of the
// same route object.
type candSig struct {
	rule     *httpRule
	matchIdx int
}

// recordedEntry is one write of a map entry.
type recordedEntry struct {
	mapName string
	e       mapEntryIR
}

// same says whether o was computed from these inputs.
func (o *hostOutput) same(l listenerSig, cands []*cand) bool {
	if o.listener != l || len(o.cands) != len(cands) {
		return false
	}
	for i, c := range cands {
		if o.cands[i] != (candSig{rule: c.rule, matchIdx: c.matchIdx}) {
			return false
		}
	}
	return true
}
