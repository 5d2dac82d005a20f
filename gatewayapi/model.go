package gatewayapi

import (
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/haptic-io/haptic/templating"
)

// apiVersion is the apiVersion of every status [Model.Statuses] returns
// for Gateway API kinds served at v1.
var apiVersion = gatewayv1.GroupVersion.String()

// ControllerName is the GatewayClass controllerName that HAPTIC serves
// unless [Options.ControllerName] names another.
const ControllerName = "haproxy-haptic.org/gateway-controller"

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
	// ControllerName is the GatewayClass controllerName to serve; "" means
	// [ControllerName].
	ControllerName string
}

// Listener is one listener of a Gateway as the fleet serving it must
// expose it: the Service and container ports come from these.
type Listener struct {
	Name     string
	Port     int32
	Protocol string // HTTP, HTTPS, TLS, TCP, UDP or anything else a Gateway declared
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
type Status struct {
	APIVersion, Kind, Namespace, Name string
	// Status is the full .status, JSON-shaped (map[string]any, []any,
	// string, int64, bool).
	Status map[string]any
}

// Model is the resolved Gateway API world of one store snapshot. It is
// immutable; see the package documentation.
type Model struct {
	opts     Options
	gateways []*gateway // ours and Accepted, sorted
	byRef    map[Ref]*gateway
	statuses []Status
}

// gateway is the resolved state of one Gateway.
type gateway struct {
	ref        Ref
	generation int64
	listeners  []Listener
	context    map[string]any
}

// Build resolves the Gateway API objects of s. It reads the aliases the
// gateway library watches: gatewayclasses, gateways, httproutes,
// grpcroutes, tlsroutes, referencegrants, services, secrets, namespaces.
// Objects of any shape are tolerated: what cannot be read is reported in
// the statuses, never by a panic.
func Build(s templating.Store, opts Options) *Model {
	if opts.ControllerName == "" {
		opts.ControllerName = ControllerName
	}
	return &Model{opts: opts, byRef: map[Ref]*gateway{}}
}

// Gateways returns the Gateways whose class is ours and that are
// Accepted, sorted by namespace, then name.
func (m *Model) Gateways() []Ref {
	out := make([]Ref, 0, len(m.gateways))
	for _, g := range m.gateways {
		out = append(out, g.ref)
	}
	return out
}

// Gateway returns the metadata.generation of one of [Model.Gateways];
// ok is false for any other Gateway.
func (m *Model) Gateway(ref Ref) (generation int64, ok bool) {
	g, ok := m.byRef[ref]
	if !ok {
		return 0, false
	}
	return g.generation, true
}

// RenderContext returns the routing model of one Gateway, the JSON-shaped
// value the render loop puts at extraContext key "gateway"; nil for a
// Gateway that is not one of [Model.Gateways]. The value is shared: do not
// modify it.
func (m *Model) RenderContext(gw Ref) map[string]any {
	g, ok := m.byRef[gw]
	if !ok {
		return nil
	}
	return g.context
}

// Listeners returns the listeners of one Gateway that its fleet must
// expose (every listener the Gateway declares, valid or not, in spec
// order); nil for a Gateway that is not one of [Model.Gateways].
func (m *Model) Listeners(gw Ref) []Listener {
	g, ok := m.byRef[gw]
	if !ok {
		return nil
	}
	return append([]Listener(nil), g.listeners...)
}

// Statuses returns the whole status of every GatewayClass of our
// controllerName, every Gateway of those classes, and every route that
// has a parentRef to one of those Gateways, sorted by kind, namespace and
// name. fleet reports what the data plane of a Gateway runs; it may be nil
// (no fleet anywhere yet).
func (m *Model) Statuses(fleet func(Ref) Fleet) []Status {
	_ = apiVersion
	return nil
}
