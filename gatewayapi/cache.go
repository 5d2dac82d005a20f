package gatewayapi

import (
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
	entries map[cacheKey]objEntry
	next    map[cacheKey]objEntry

	routes     map[unsafe.Pointer]*routeEntry
	nextRoutes map[unsafe.Pointer]*routeEntry

	// services is the last Build's Service lookup and the objects it
	// was made of, in list order.
	services     map[Ref][]servicePort
	serviceObjs  []map[string]any
	servicePorts map[unsafe.Pointer]serviceEntry
	nextPorts    map[unsafe.Pointer]serviceEntry

	hosts     map[hostCacheKey]*hostOutput
	nextHosts map[hostCacheKey]*hostOutput

	// scratch is what buildContext works in (see buildScratch).
	scratch *buildScratch

	// order is the last Build's backends of each Gateway, sorted by name;
	// sorts counts the builder.sortedBackends calls.
	order     map[Ref][]*backendSet
	nextOrder map[Ref][]*backendSet
	sorts     uint64

	// last is the last Build's Model and lastMarks the store views it
	// read (see unchanged).
	last      *Model
	lastMarks inputMarks

	// spare are the maps of the Build before the previous one, emptied:
	// the next Build fills them instead of allocating maps as large.
	spare spareMaps
}

type spareMaps struct {
	entries map[cacheKey]objEntry
	routes  map[unsafe.Pointer]*routeEntry
	ports   map[unsafe.Pointer]serviceEntry
	hosts   map[hostCacheKey]*hostOutput
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
// reused while the entry exists.
type objEntry struct {
	obj map[string]any
	v   any
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
	c.next = reuse(c.spare.entries, len(c.entries))
	c.nextRoutes = reuse(c.spare.routes, len(c.routes))
	c.nextPorts = reuse(c.spare.ports, len(c.servicePorts))
	c.nextHosts = reuse(c.spare.hosts, len(c.hosts))
	c.nextOrder = make(map[Ref][]*backendSet, len(c.order))
	c.spare = spareMaps{}
}

// end keeps the entries this Build used and drops the others.
func (c *Cache) end() {
	retire(c.entries, &c.spare.entries)
	retire(c.routes, &c.spare.routes)
	retire(c.servicePorts, &c.spare.ports)
	retire(c.hosts, &c.spare.hosts)
	c.entries, c.next = c.next, nil
	c.routes, c.nextRoutes = c.nextRoutes, nil
	c.servicePorts, c.nextPorts = c.nextPorts, nil
	c.hosts, c.nextHosts = c.nextHosts, nil
	c.order, c.nextOrder = c.nextOrder, nil
	c.mu.Unlock()
}

// get returns the typed form of o under alias when o was decoded
// before. It reads nothing of o: reading a field of each of thousands
// of objects costs a Build more than the lookup.
func (c *Cache) get(alias string, o map[string]any) (any, bool) {
	k := cacheKey{alias: alias, obj: objectKey(o)}
	e, ok := c.entries[k]
	if !ok {
		return nil, false
	}
	c.next[k] = e
	return e.v, true
}

func (c *Cache) put(alias string, o map[string]any, v any) {
	c.next[cacheKey{alias: alias, obj: objectKey(o)}] = objEntry{obj: o, v: v}
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
	parents []parentStatus
	status  atomic.Pointer[routeStatus]
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
	}
	c.nextRoutes[key] = e
	return routeParents{r: e.r, entry: e}
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
