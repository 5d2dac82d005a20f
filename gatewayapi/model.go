package gatewayapi

import (
	"fmt"
	"sort"
	"unsafe"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/haptic-io/haptic/templating"
)

// ControllerName is the GatewayClass controllerName that HAPTIC serves
// unless [Options.ControllerName] names another.
const ControllerName = "haproxy-haptic.org/gateway-controller"

// apiVersion is the apiVersion of every status [Model.Statuses] returns.
var apiVersion = gatewayv1.GroupVersion.String()

// Ref names a namespaced object (for a GatewayClass, Namespace is empty).
type Ref struct{ Namespace, Name string }

// String returns "namespace/name", or "name" without a namespace.
func (r Ref) String() string {
	if r.Namespace == "" {
		return r.Name
	}
	return r.Namespace + "/" + r.Name
}

// Options tune [Build].
type Options struct {
	// ControllerName is the GatewayClass controllerName to serve; ""
	// means [ControllerName].
	ControllerName string
	// SupportedFeatures is what GatewayClass status.supportedFeatures
	// lists; nil means [SupportedFeatures].
	SupportedFeatures []string
	// Cache, when set, keeps decoded objects from one Build to the next
	// (see [Cache]); nil decodes every object every time. The result is
	// the same either way.
	Cache *Cache
	// StatusOnly, when set, skips the render contexts: the Model answers
	// everything but [Model.RenderContext], which returns nil. For a
	// caller that provisions and writes statuses and renders nothing.
	StatusOnly bool
	// RenderGateway, when set, builds the render context of that Gateway
	// alone: [Model.RenderContext] returns nil for every other. For a
	// caller that renders one Gateway, as each of the controller's
	// per-Gateway loops does; the rest of the Model is the same.
	RenderGateway Ref
}

// Listener is one listener of a Gateway as the fleet serving it must
// expose it: the Service and container ports come from these.
type Listener struct {
	Name     string
	Port     int32
	Protocol string // HTTP, HTTPS, TLS, or whatever else a Gateway declared
}

// Fleet is what the data plane of one Gateway runs, as the controller
// observed it; [Model.Statuses] turns it into the Gateway's addresses and
// Programmed conditions.
type Fleet struct {
	// Addresses are the IPs (or hostnames) where the Gateway is served;
	// empty means none yet.
	Addresses []string
	// ProgrammedGeneration is the newest Gateway generation whose plan
	// every pod of the fleet acknowledged; 0 means none.
	ProgrammedGeneration int64
	// Message says why the Gateway is not programmed, if it is not.
	Message string
}

// Status is the whole .status of one object, for server-side apply.
// Conditions carry no lastTransitionTime: [WithTransitionTimes] adds
// them from the object's current status and a clock the caller reads.
type Status struct {
	APIVersion, Kind, Namespace, Name string
	// Status is the full .status, JSON-shaped (map[string]any, []any,
	// string, int64, bool). It is shared: the Statuses of Models built
	// with one [Cache] return the very same map for a route whose status
	// did not change, so a caller may compare them by identity, and must
	// not modify them.
	Status map[string]any
}

// Model is the resolved Gateway API world of one store snapshot. It is
// immutable; see the package documentation.
type Model struct {
	opts    Options
	classes []*gatewayClass
	all     map[Ref]*gateway // every Gateway of our classes
	order   []*gateway       // the same, sorted
	routes  []routeParents   // routes with at least one parent of ours
}

// routeParents is a route as one Build attached it: the route (the
// template a Cache shares between Builds: never modified) and its
// status.parents entries of ours.
type routeParents struct {
	r       *route
	parents []parentStatus
	// entry is the route's cache entry, where the last Build keeps the
	// parents and the last Statuses the status; nil without a cache.
	entry *routeEntry
}

// gatewayClass is one GatewayClass of our controllerName.
type gatewayClass struct {
	name       string
	generation int64
	accepted   condition
}

// Build resolves the Gateway API objects of s. It reads the aliases the
// gateway library watches: gatewayclasses, gateways, httproutes,
// grpcroutes, tlsroutes, referencegrants, services, secrets, namespaces
// (an alias the store does not have reads as empty). Objects of any
// shape are tolerated: an object that does not decode is ignored, a
// value HAPTIC cannot serve is reported in the statuses, and Build never
// panics. With a Cache, a Build of a [store.Snapshot] whose views of all
// those aliases are the very ones the Cache's last Build read (the store
// changed elsewhere only: EndpointSlices, say) returns that Build's Model.
func Build(s templating.Store, opts Options) *Model {
	if opts.ControllerName == "" {
		opts.ControllerName = ControllerName
	}
	if opts.SupportedFeatures == nil {
		opts.SupportedFeatures = SupportedFeatures()
	}
	var marks inputMarks
	var epoch uint64 // of the attach memos (see attachMemo); 0: none
	if opts.Cache != nil {
		var ok bool
		if marks, ok = marksOf(s); ok {
			if m := opts.Cache.unchanged(marks, opts); m != nil {
				return m
			}
		}
		opts.Cache.begin()
		defer opts.Cache.end()
		epoch = opts.Cache.attachEpoch(marks, ok, opts.ControllerName)
	}
	w := newWorld(s, opts)
	m := &Model{opts: opts, all: map[Ref]*gateway{}}

	ours := map[string]*gatewayClass{}
	for _, gc := range list[gatewayv1.GatewayClass](s, AliasGatewayClasses, opts.Cache) {
		if string(gc.Spec.ControllerName) != opts.ControllerName {
			continue
		}
		c := &gatewayClass{name: gc.Name, generation: gc.Generation,
			accepted: cond(string(gatewayv1.GatewayClassConditionStatusAccepted), true, string(gatewayv1.GatewayClassReasonAccepted), "HAPTIC serves this class")}
		if gc.Spec.ParametersRef != nil {
			c.accepted = cond(string(gatewayv1.GatewayClassConditionStatusAccepted), false, string(gatewayv1.GatewayClassReasonInvalidParameters), "parametersRef is not supported")
		}
		ours[gc.Name] = c
		m.classes = append(m.classes, c)
	}
	sort.Slice(m.classes, func(i, j int) bool { return m.classes[i].name < m.classes[j].name })

	for _, gw := range list[gatewayv1.Gateway](s, AliasGateways, opts.Cache) {
		c, ok := ours[string(gw.Spec.GatewayClassName)]
		if !ok || gw.Namespace == "" {
			continue
		}
		g := w.resolveGateway(gw)
		if c.accepted.Status != "True" {
			g.rejected = &condition{Type: string(gatewayv1.GatewayConditionAccepted), Status: "False", Reason: string(gatewayv1.GatewayReasonInvalid), Message: "the GatewayClass is not accepted"}
		} else if inf := gw.Spec.Infrastructure; inf != nil && inf.ParametersRef != nil {
			// HAPTIC reads no parameters resource, so every reference is
			// to a kind it does not support: the API's InvalidParameters.
			p := inf.ParametersRef
			g.rejected = &condition{Type: string(gatewayv1.GatewayConditionAccepted), Status: "False", Reason: string(gatewayv1.GatewayReasonInvalidParameters),
				Message: fmt.Sprintf("infrastructure.parametersRef %s/%s %s is not supported: HAPTIC takes no Gateway parameters", p.Group, p.Kind, p.Name)}
		} else if len(gw.Spec.Addresses) > 0 {
			g.rejected = &condition{Type: string(gatewayv1.GatewayConditionAccepted), Status: "False", Reason: string(gatewayv1.GatewayReasonUnsupportedAddress), Message: "spec.addresses is not supported: each Gateway gets the addresses of its own fleet"}
		}
		m.all[g.ref] = g
		m.order = append(m.order, g)
	}
	sort.Slice(m.order, func(i, j int) bool { return lessRef(m.order[i].ref, m.order[j].ref) })
	for i, g := range m.order {
		g.index = i
	}
	if opts.Cache != nil {
		opts.Cache.presize(m.order)
	}

	hrs := list[gatewayv1.HTTPRoute](s, AliasHTTPRoutes, opts.Cache)
	grs := list[gatewayv1.GRPCRoute](s, AliasGRPCRoutes, opts.Cache)
	trs := list[gatewayv1.TLSRoute](s, AliasTLSRoutes, opts.Cache)
	routes := make([]routeParents, 0, len(hrs)+len(grs)+len(trs))
	for _, hr := range hrs {
		routes = append(routes, w.resolve(hr, unsafe.Pointer(hr), func() *route { return w.resolveHTTPRoute(hr) }))
	}
	for _, gr := range grs {
		routes = append(routes, w.resolve(gr, unsafe.Pointer(gr), func() *route { return w.resolveGRPCRoute(gr) }))
	}
	for _, tr := range trs {
		routes = append(routes, w.resolve(tr, unsafe.Pointer(tr), func() *route { return w.resolveTLSRoute(tr) }))
	}
	m.routes = routes[:0] // filtered in place
	for _, rp := range routes {
		if rp.r.ref.Namespace == "" {
			continue
		}
		switch e := rp.entry; {
		case e == nil:
			rp.parents = m.attach(w, rp.r, nil, nil)
		case epoch != 0 && e.attached.epoch == epoch:
			// The same template on the same Gateways: it attaches as it
			// did, to the same parents.
			rp.parents = e.parents
			m.rejoin(e.attached.joins)
		default:
			var joins []join
			rp.parents = m.attach(w, rp.r, e.parents, &joins)
			e.parents = rp.parents
			e.attached = attachMemo{epoch: epoch, joins: joins}
		}
		if len(rp.parents) > 0 {
			m.routes = append(m.routes, rp)
		}
	}
	for _, g := range m.order {
		if g.servable() && !opts.StatusOnly && (opts.RenderGateway == Ref{} || opts.RenderGateway == g.ref) {
			g.context = g.buildContext(opts.Cache)
		}
	}
	if opts.Cache != nil {
		opts.Cache.remember(marks, m)
	}
	return m
}

func lessRef(a, b Ref) bool {
	if a.Namespace != b.Namespace {
		return a.Namespace < b.Namespace
	}
	return a.Name < b.Name
}

// servable says whether g is one of Model.Gateways: Accepted.
func (g *gateway) servable() bool {
	return g.rejected == nil && g.accepted().Status == "True"
}

// Gateways returns the Gateways whose class is ours and that are
// Accepted, sorted by namespace, then name.
func (m *Model) Gateways() []Ref {
	out := []Ref{}
	for _, g := range m.order {
		if g.servable() {
			out = append(out, g.ref)
		}
	}
	return out
}

// Gateway returns the metadata.generation of one of [Model.Gateways];
// ok is false for any other Gateway.
func (m *Model) Gateway(ref Ref) (generation int64, ok bool) {
	g, ok := m.all[ref]
	if !ok || !g.servable() {
		return 0, false
	}
	return g.generation, true
}

// RenderContext returns the routing model of one Gateway, the JSON-shaped
// value the render loop puts at extraContext key "gateway"; nil for a
// Gateway that is not one of [Model.Gateways]. The value is shared: do
// not modify it. docs/gateway.md describes its shape.
func (m *Model) RenderContext(gw Ref) map[string]any {
	g, ok := m.all[gw]
	if !ok || !g.servable() {
		return nil
	}
	return g.context
}

// Listeners returns the listeners one Gateway declares, in spec order,
// valid or not (the fleet exposes every port; an invalid listener gets
// no frontend); nil for a Gateway that is not one of [Model.Gateways].
func (m *Model) Listeners(gw Ref) []Listener {
	g, ok := m.all[gw]
	if !ok || !g.servable() {
		return nil
	}
	out := make([]Listener, 0, len(g.listeners))
	for _, l := range g.listeners {
		out = append(out, Listener{Name: l.name, Port: l.port, Protocol: l.protocol})
	}
	return out
}
