package gatewayapi

import (
	"maps"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/haptic-io/haptic/store"
	"github.com/haptic-io/haptic/templating"
)

// Cache keeps what one [Build] computed, so that the next Build of a
// store where few objects changed redoes only the work those changes
// touch:
//
//   - the typed form of each object, for the very same object of the
//     store: objects are immutable once in a store (a change replaces
//     the object), so the object's address is its identity, as it is for
//     the templating engine's replay;
//   - each route as resolved (rules normalized, backendRefs resolved to
//     backend sets, ResolvedRefs), for the same typed object, with the
//     Services and ReferenceGrants its resolution read: the entry is
//     reused only while those read the same;
//   - the ports of each Service object, and the whole Service lookup
//     while the store lists the very same Services;
//   - how each resolved route attached to the listeners, reused while
//     the Gateways, their classes and what their listeners read are the
//     same objects (see attachMemo);
//   - for each host key of each Gateway, the map entries, groups,
//     selectors and backends its rule matches became, reused while the
//     same rules (the same resolved routes) reach that host key on an
//     unchanged listener, together with their JSON-shaped form, and
//     the backends of each Gateway's context in their sorted order.
//
// Each Build forgets the entries its store no longer holds. A Cache is
// safe for concurrent use; Builds that share one take turns on it. The
// zero value is ready to use.
type Cache struct {
	mu sync.Mutex
	// builds counts the Builds: an entry marked with the current count
	// is one this Build used. used counts the entries and routes it used,
	// so that end sweeps the maps only when some went unused.
	builds uint64
	used   struct{ entries, routes int }

	entries map[cacheKey]*objEntry
	routes  map[unsafe.Pointer]*routeEntry

	// services is the last Build's Service lookup and the objects it
	// was made of, in list order, and servicePorts the name and ports of
	// each of those objects.
	services     map[Ref][]servicePort
	serviceObjs  []map[string]any
	servicePorts map[unsafe.Pointer]serviceEntry

	// gateways is what the last Build kept of each Gateway whose context
	// it built; sorts counts the builder.sortedBackends calls.
	gateways map[Ref]*gatewayState
	sorts    uint64

	// scratch is what buildContext works in (see buildScratch).
	scratch *buildScratch

	// last is the last Build's Model and lastMarks the store views it
	// read (see unchanged).
	last      *Model
	lastMarks inputMarks

	// attachMarks are the views that decided the last Build's
	// attachments, of controller name attachController, when
	// attachKnown; epoch counts their changes (see attachEpoch).
	attachMarks      inputMarks
	attachController string
	attachKnown      bool
	epoch            uint64

	// sparePorts is the servicePorts before the last, emptied: the
	// next lookup made anew fills it instead of allocating a map as
	// large.
	sparePorts map[unsafe.Pointer]serviceEntry
}

// readAliases are the aliases Build reads, those of [WatchedResources].
var readAliases = [...]string{AliasGatewayClasses, AliasGateways, AliasHTTPRoutes, AliasGRPCRoutes, AliasTLSRoutes,
	AliasReferenceGrants, AliasServices, AliasSecrets, AliasNamespaces}

// inputMarks are a snapshot's views of readAliases.
type inputMarks [len(readAliases)]store.Mark

// marksOf returns s's views of what Build reads; ok is false for a store
// that does not tell them (not a [store.Snapshot]).
func marksOf(s templating.Store) (marks inputMarks, ok bool) {
	ms, ok := s.(interface{ Mark(alias string) store.Mark })
	if !ok {
		return marks, false
	}
	for i, a := range readAliases {
		marks[i] = ms.Mark(a)
	}
	return marks, true
}

// unchanged returns the last Build's Model when it read the views marks
// name with the same options, else nil. Views are immutable and a store
// derives a new one for an alias only when the alias changes, so the
// same views are the same objects.
func (c *Cache) unchanged(marks inputMarks, opts Options) *Model {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.last == nil || c.lastMarks != marks {
		return nil
	}
	o := c.last.opts
	if o.ControllerName != opts.ControllerName || o.StatusOnly != opts.StatusOnly || o.RenderGateway != opts.RenderGateway ||
		!slices.Equal(o.SupportedFeatures, opts.SupportedFeatures) {
		return nil
	}
	return c.last
}

// remember keeps m, built from the views marks name, for unchanged (with
// the lock of the Build that made it); a store without marks keeps
// nothing.
func (c *Cache) remember(marks inputMarks, m *Model) {
	if marks == (inputMarks{}) {
		c.last = nil
		return
	}
	c.last, c.lastMarks = m, marks
}

// reuse returns m (emptied by retire), or a new map for n entries.
func reuse[K comparable, V any](m map[K]V, n int) map[K]V {
	if m == nil {
		return make(map[K]V, n)
	}
	return m
}

// retire empties the map a Build no longer reads and keeps it as *spare.
func retire[K comparable, V any](old map[K]V, spare *map[K]V) {
	clear(old)
	*spare = old
}

// cacheKey is one object of one alias, by its address.
type cacheKey struct {
	alias string
	obj   unsafe.Pointer
}

// objEntry is the typed form v of object obj (nil when it did not
// decode); obj keeps the object alive, so that its address is not
// reused while the entry exists. used is the last Build that read it.
type objEntry struct {
	obj  map[string]any
	v    any
	used uint64
}

// serviceEntry is one Service object's name and ports.
type serviceEntry struct {
	obj   map[string]any
	ref   Ref
	ports []servicePort
}

// objectKey is the address of a store object.
func objectKey(o map[string]any) unsafe.Pointer { return reflect.ValueOf(o).UnsafePointer() }

// begin starts one Build's use of the cache.
func (c *Cache) begin() {
	c.mu.Lock()
	if c.entries == nil {
		c.entries, c.routes = map[cacheKey]*objEntry{}, map[unsafe.Pointer]*routeEntry{}
	}
	c.builds++
	c.used.entries, c.used.routes = 0, 0
}

// end keeps the entries this Build used and drops the others.
func (c *Cache) end() {
	if c.used.entries < len(c.entries) {
		maps.DeleteFunc(c.entries, func(_ cacheKey, e *objEntry) bool { return e.used != c.builds })
	}
	if c.used.routes < len(c.routes) {
		maps.DeleteFunc(c.routes, func(_ unsafe.Pointer, e *routeEntry) bool { return e.used != c.builds })
	}
	maps.DeleteFunc(c.gateways, func(_ Ref, g *gatewayState) bool { return g.used != c.builds })
	c.mu.Unlock()
}

// get returns the typed form of o under alias when o was decoded
// before. It reads nothing of o: reading a field of each of thousands
// of objects costs a Build more than the lookup.
func (c *Cache) get(alias string, o map[string]any) (any, bool) {
	k := cacheKey{alias: alias, obj: objectKey(o)}
	e := c.entries[k]
	if e == nil {
		return nil, false
	}
	c.mark(&e.used, &c.used.entries)
	return e.v, true
}

// put keeps v as the typed form of o under alias, which get did not know.
func (c *Cache) put(alias string, o map[string]any, v any) {
	c.entries[cacheKey{alias: alias, obj: objectKey(o)}] = &objEntry{obj: o, v: v, used: c.builds}
	c.used.entries++
}

// mark marks an entry used by this Build and counts it, once.
func (c *Cache) mark(used *uint64, count *int) {
	if *used != c.builds {
		*used = c.builds
		*count++
	}
}

// routeEntry is one resolved route and what its resolution read.
type routeEntry struct {
	// src is the typed object (kept alive: the key is its address); r
	// the template, which Builds share and never modify.
	src  any
	r    *route
	deps routeDeps
	// services is the Service lookup deps last read the same in: while
	// a Build's is that very map (servicesOf hands out the previous one
	// while the Services are the same objects), nothing is looked up.
	services map[Ref][]servicePort
	// parents are the route's parents as the last Build attached it
	// (Builds take turns on the entry); status is the route's .status as
	// the last [Model.Statuses] made it, for the routes resolved from
	// this entry.
	parents  []parentStatus
	attached attachMemo
	status   atomic.Pointer[routeStatus]
	// used is the last Build that resolved the route from this entry.
	used uint64
}

// routeDeps are the lookups of one route's resolution.
type routeDeps struct {
	services []serviceDep
	// grants is set when the resolution consulted the ReferenceGrants,
	// which were then grantObjs (typed objects of the cache: the same
	// pointers are the same grants).
	grants    bool
	grantObjs []*gatewayv1.ReferenceGrant
}

// serviceDep is one Service lookup: the ports found, or found false.
type serviceDep struct {
	ref   Ref
	found bool
	ports []servicePort
}

// still says whether the lookups of e's resolution read the same in w.
func (e *routeEntry) still(w *world) bool {
	d := &e.deps
	if d.grants && !slices.Equal(d.grantObjs, w.grants) {
		return false
	}
	if len(d.services) == 0 || sameLookup(e.services, w.services) {
		return true
	}
	for _, s := range d.services {
		ports, ok := w.services[s.ref]
		if ok != s.found || !slices.Equal(ports, s.ports) {
			return false
		}
	}
	e.services = w.services
	return true
}

// sameLookup says whether a and b are the very same Service lookup.
func sameLookup(a, b map[Ref][]servicePort) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

// resolve returns the route of typed object src (of address key, a
// typed object of the cache), through the cache when there is one: the
// cached template when its object and lookups are unchanged, else fresh
// from f (and cached).
func (w *world) resolve(src any, key unsafe.Pointer, f func() *route) routeParents {
	c := w.opts.Cache
	if c == nil {
		return routeParents{r: f()}
	}
	e := c.routes[key]
	if e == nil || !e.still(w) {
		w.rec = &routeDeps{}
		r := f()
		e = &routeEntry{src: src, r: r, deps: *w.rec, services: w.services}
		w.rec = nil
		c.routes[key] = e
	}
	c.mark(&e.used, &c.used.routes)
	return routeParents{r: e.r, entry: e}
}

// gatewayState is what a Build keeps of one Gateway whose context it
// built: the host key outputs, by host key, and the backends of the
// context, sorted by name. used is the last Build that built it.
type gatewayState struct {
	hosts map[string]*hostOutput
	order []*backendSet
	used  uint64
}

// gateway returns what the Cache keeps of Gateway gw, for this Build to
// read and update (see sweepHosts).
func (c *Cache) gateway(gw Ref) *gatewayState {
	if c.gateways == nil {
		c.gateways = map[Ref]*gatewayState{}
	}
	g := c.gateways[gw]
	if g == nil {
		g = &gatewayState{hosts: map[string]*hostOutput{}}
		c.gateways[gw] = g
	}
	g.used = c.builds
	return g
}

// sweepHosts drops the outputs of hosts that this Build did not use,
// when there are any: it used n.
func (c *Cache) sweepHosts(hosts map[string]*hostOutput, n int) {
	if len(hosts) == n {
		return
	}
	for hk, o := range hosts {
		if o.used != c.builds {
			delete(hosts, hk)
		}
	}
}

// hostOutput is what the rule matches reaching one host key became, and
// the inputs that decide it: the listener and the candidates in
// attachment order, and the attachments they came from; used is the last
// Build that used it.
type hostOutput struct {
	used      uint64
	listener  listenerSig
	cands     []candSig
	from      []*attachedRoute
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
	m int // index of mapNames
	e mapEntryIR
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
