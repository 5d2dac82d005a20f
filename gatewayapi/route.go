package gatewayapi

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"sort"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// route is what attachment needs of any route kind.
type route struct {
	kind       string
	ref        Ref
	generation int64
	created    metav1.Time
	parentRefs []gatewayv1.ParentReference
	hostnames  []string
	// hasHostnames is true when the spec lists hostnames, valid or not:
	// a route whose hostnames are all invalid matches none.
	hasHostnames bool
	// resolved is the route's ResolvedRefs condition (the same for every
	// parent: references do not depend on the parent).
	resolved condition
	// unsupported, when set, makes the route Accepted False with reason
	// UnsupportedValue on every parent.
	unsupported string
	// http, grpc or tls holds the kind's rules.
	http *httpRoute
	grpc *grpcRoute
	tls  *tlsRoute
}

// newRoute is a route of kind from the metadata, parents and hostnames
// every route kind's spec has; the caller fills in the kind's rules.
func newRoute(kind string, meta *metav1.ObjectMeta, parents []gatewayv1.ParentReference, hostnames []gatewayv1.Hostname) *route {
	r := &route{
		kind:       kind,
		ref:        Ref{Namespace: meta.Namespace, Name: meta.Name},
		generation: meta.Generation,
		created:    meta.CreationTimestamp,
		parentRefs: parents,
	}
	for _, h := range hostnames {
		r.addHostname(string(h))
	}
	return r
}

// addHostname adds a hostname of the route's spec; one that is not a
// DNS name (the API server's schema refuses those) is left out and makes
// the route UnsupportedValue.
func (r *route) addHostname(h string) {
	r.hasHostnames = true
	if p := hostnameProblem(h); p != "" {
		if r.unsupported == "" {
			r.unsupported = fmt.Sprintf("hostname %.64q %s", h, p)
		}
		return
	}
	r.hostnames = append(r.hostnames, h)
}

// parentStatus is one entry of status.parents.
type parentStatus struct {
	ref   gatewayv1.ParentReference
	conds []condition
}

// attachedRoute is a route attached to one listener (li, its place in
// the Gateway's listeners), with the hostnames it serves there (the
// intersections of its hostnames with the listener's; "*" for any) and
// their host keys. It names the listener by place so that a later Build
// of the same Gateways reuses it.
type attachedRoute struct {
	r     *route
	li    int
	hosts []string
	keys  []string
}

// httpRules are the HTTP rules of an HTTPRoute or GRPCRoute, else nil.
func (r *route) httpRules() *httpRoute {
	switch {
	case r.http != nil:
		return r.http
	case r.grpc != nil:
		return r.grpc.http
	}
	return nil
}

// olderThan orders routes by creation time, then namespace/name: the
// tie-breaks of the specification.
func (r *route) olderThan(o *route) bool {
	if !r.created.Equal(&o.created) {
		return r.created.Before(&o.created)
	}
	if r.ref.Namespace != o.ref.Namespace {
		return r.ref.Namespace < o.ref.Namespace
	}
	return r.ref.Name < o.ref.Name
}

// attach resolves every parentRef of r that names a Gateway of ours,
// attaching r to the listeners that accept it, and returns the parents'
// statuses: last itself (or the start of it) when they are the same as
// last, the parents of r's previous status, so that an unchanged route
// allocates nothing. With rec set, it appends the listeners r joins.
func (m *Model) attach(w *world, r *route, last []parentStatus, rec *[]join) []parentStatus {
	var parents []parentStatus
	same := 0 // parents so far equal to last's, while parents is nil
	for _, p := range r.parentRefs {
		grp, kind := groupGateway, kindGateway
		if p.Group != nil {
			grp = string(*p.Group)
		}
		if p.Kind != nil {
			kind = string(*p.Kind)
		}
		if grp != groupGateway || kind != kindGateway {
			continue
		}
		ns := r.ref.Namespace
		if p.Namespace != nil && *p.Namespace != "" {
			ns = string(*p.Namespace)
		}
		g, ok := m.all[Ref{Namespace: ns, Name: string(p.Name)}]
		if !ok {
			continue
		}
		accepted := m.attachParent(w, r, g, p, rec)
		if accepted.Status == "True" && r.unsupported != "" {
			accepted = cond(string(gatewayv1.RouteConditionAccepted), false, string(gatewayv1.RouteReasonUnsupportedValue), r.unsupported)
		}
		if parents == nil && same < len(last) && last[same].is(p, accepted, r.resolved) {
			same++
			continue
		}
		if parents == nil {
			parents = append(make([]parentStatus, 0, len(r.parentRefs)), last[:same]...)
		}
		parents = append(parents, parentStatus{ref: p, conds: []condition{accepted, r.resolved}})
	}
	if parents == nil {
		return last[:same:same]
	}
	return parents
}

// is says whether ps is the status of parent p with conditions
// accepted and resolved.
func (ps *parentStatus) is(p gatewayv1.ParentReference, accepted, resolved condition) bool {
	return len(ps.conds) == 2 && ps.conds[0] == accepted && ps.conds[1] == resolved && equalParentRef(ps.ref, p)
}

// equalParentRef says whether a and b are equal parentRefs; those of one
// route template share their pointers.
func equalParentRef(a, b gatewayv1.ParentReference) bool {
	return a.Name == b.Name && samePtr(a.Group, b.Group) && samePtr(a.Kind, b.Kind) && samePtr(a.Namespace, b.Namespace) &&
		samePtr(a.SectionName, b.SectionName) && samePtr(a.Port, b.Port)
}

func samePtr[T comparable](a, b *T) bool {
	return a == b || (a != nil && b != nil && *a == *b)
}

// attachParent attaches r to the listeners of g that p selects and that
// accept it, and returns the parent's Accepted condition. With rec set,
// it appends the listeners r joins.
func (m *Model) attachParent(w *world, r *route, g *gateway, p gatewayv1.ParentReference, rec *[]join) condition {
	accepted := string(gatewayv1.RouteConditionAccepted)
	// A Gateway has a few listeners: these lists stay on the stack.
	cands := make([]*listener, 0, 8)
	for _, l := range g.listeners {
		if p.SectionName != nil && string(*p.SectionName) != l.name {
			continue
		}
		if p.Port != nil && int32(*p.Port) != l.port {
			continue
		}
		cands = append(cands, l)
	}
	if len(cands) == 0 {
		return cond(accepted, false, string(gatewayv1.RouteReasonNoMatchingParent), "no listener of the Gateway matches the parentRef's sectionName and port")
	}
	allowed := make([]*listener, 0, 8)
	for _, l := range cands {
		if l.acceptsRoutes && contains(l.kinds, r.kind) && w.allowsNamespace(l, g.ref.Namespace, r.ref.Namespace) {
			allowed = append(allowed, l)
		}
	}
	if len(allowed) == 0 {
		return cond(accepted, false, string(gatewayv1.RouteReasonNotAllowedByListeners), "no listener of the Gateway allows this route (kind or namespace)")
	}
	n := 0
	for _, l := range allowed {
		var hosts []string
		if !r.hasHostnames {
			h := l.hostname
			if h == "" {
				h = "*"
			}
			hosts = []string{h}
		} else {
			for _, rh := range r.hostnames {
				// A route has a few hostnames: a scan beats a set.
				if h, ok := intersect(l.hostname, rh); ok && !slices.Contains(hosts, h) {
					hosts = append(hosts, h)
				}
			}
		}
		if len(hosts) == 0 {
			continue
		}
		n++
		l.attached++
		a := &attachedRoute{r: r, li: l.index, hosts: hosts, keys: make([]string, len(hosts))}
		for i, h := range hosts {
			a.keys[i] = hostKey(l, h)
		}
		g.join(a)
		if rec != nil {
			*rec = append(*rec, join{gw: g.index, a: a})
		}
	}
	if n == 0 {
		return cond(accepted, false, string(gatewayv1.RouteReasonNoMatchingListenerHostname), "no hostname of the route matches a listener hostname")
	}
	return cond(accepted, true, string(gatewayv1.RouteReasonAccepted), "route accepted")
}

// backendRef is one resolved backend of a rule.
type backendRef struct {
	Namespace string `json:"namespace"`
	Service   string `json:"service"`
	Port      int64  `json:"port"`
	Weight    int64  `json:"weight"`
}

// backendSet is the HAProxy backend one rule's backendRefs become.
type backendSet struct {
	Name string       `json:"name"`
	Mode string       `json:"mode"` // http or tcp
	H2   bool         `json:"h2"`   // servers speak HTTP/2 in clear text (gRPC, appProtocol h2c)
	Refs []backendRef `json:"refs"`
	// ErrorWeight is the share (in backendRef weights) of the rule's
	// traffic that went to backends that do not resolve; it is answered
	// with 500.
	ErrorWeight int64 `json:"errorWeight"`
	// TimeoutMS is the server timeout in milliseconds; 0 keeps the
	// library's default.
	TimeoutMS int64 `json:"timeoutMS"`
	// RetryOn and Retries are HAProxy's retry-on and retries for a rule
	// with a retry policy; RetryOn "" keeps the library's.
	RetryOn string `json:"retryOn"`
	Retries int64  `json:"retries"`
	// Actions are backendRef-level filters: header lines of the
	// backend's own section (req-set, req-add, req-del, rsp-set,
	// rsp-add, rsp-del).
	Actions []*actionIR `json:"actions"`
	// shaped, when set, is the JSON-shaped form, kept for the backend of a
	// cached route (see mapEntryIR.shaped).
	shaped map[string]any
	// sort is the Cache's count of sortedBackends calls when the last
	// one found the backend in its previous order.
	sort uint64
}

// refResult is how one backendRef resolved.
type refResult struct {
	ref    backendRef
	reason string // "" when it resolved
	msg    string
	h2     bool
}

// resolveBackend resolves one backendRef of a route of kind routeKind in
// namespace ns.
func (w *world) resolveBackend(routeKind, ns string, b gatewayv1.BackendRef) refResult {
	grp, kind := "", kindService
	if b.Group != nil {
		grp = string(*b.Group)
	}
	if b.Kind != nil {
		kind = string(*b.Kind)
	}
	weight := int64(1)
	if b.Weight != nil {
		weight = int64(*b.Weight)
	}
	target := ns
	if b.Namespace != nil && *b.Namespace != "" {
		target = string(*b.Namespace)
	}
	name := string(b.Name)
	res := refResult{ref: backendRef{Namespace: target, Service: name, Weight: weight}}
	if grp != "" || kind != kindService {
		res.reason, res.msg = string(gatewayv1.RouteReasonInvalidKind), fmt.Sprintf("backendRef %s/%s %s: only core Services are supported", grp, kind, name)
		return res
	}
	if target != ns && !w.granted(groupGateway, routeKind, ns, "", kindService, target, name) {
		res.reason, res.msg = string(gatewayv1.RouteReasonRefNotPermitted), fmt.Sprintf("backendRef to Service %s/%s is not permitted by a ReferenceGrant", target, name)
		return res
	}
	ports, ok := w.services[Ref{Namespace: target, Name: name}]
	if w.rec != nil {
		w.rec.services = append(w.rec.services, serviceDep{ref: Ref{Namespace: target, Name: name}, found: ok, ports: ports})
	}
	if !ok || !validName(target) || !validName(name) {
		res.reason, res.msg = string(gatewayv1.RouteReasonBackendNotFound), fmt.Sprintf("Service %s/%s not found", target, name)
		return res
	}
	if b.Port == nil {
		res.reason, res.msg = string(gatewayv1.RouteReasonUnsupportedValue), fmt.Sprintf("backendRef to Service %s/%s has no port", target, name)
		return res
	}
	for _, p := range ports {
		if p.port == int64(*b.Port) {
			res.ref.Port = p.port
			res.h2 = p.appProtocol == "kubernetes.io/h2c"
			return res
		}
	}
	res.reason, res.msg = string(gatewayv1.RouteReasonBackendNotFound), fmt.Sprintf("Service %s/%s has no port %d", target, name, *b.Port)
	return res
}

// reasonRank orders ResolvedRefs reasons when a route has several bad
// references: the one reported is the first in this order.
var reasonRank = map[string]int{
	string(gatewayv1.RouteReasonRefNotPermitted):  0,
	string(gatewayv1.RouteReasonInvalidKind):      1,
	string(gatewayv1.RouteReasonBackendNotFound):  2,
	string(gatewayv1.RouteReasonUnsupportedValue): 3,
}

// resolvedRefs folds the results of a route's references into its
// ResolvedRefs condition.
func resolvedRefs(results []refResult) condition {
	best := -1
	for i, r := range results {
		if r.reason == "" {
			continue
		}
		if best < 0 || reasonRank[r.reason] < reasonRank[results[best].reason] {
			best = i
		}
	}
	if best < 0 {
		return cond(string(gatewayv1.RouteConditionResolvedRefs), true, string(gatewayv1.RouteReasonResolvedRefs), "all references resolved")
	}
	return cond(string(gatewayv1.RouteConditionResolvedRefs), false, results[best].reason, results[best].msg)
}

// newBackendSet builds the backend of one rule from its resolved refs;
// ok is false when no traffic can reach a resolved backend (the rule is
// answered with 500).
func newBackendSet(mode, prefix string, h2 bool, results []refResult) (*backendSet, bool) {
	bs := &backendSet{Mode: mode, H2: h2}
	for _, r := range results {
		if r.ref.Weight <= 0 {
			continue
		}
		if r.reason != "" {
			bs.ErrorWeight += r.ref.Weight
			continue
		}
		if r.h2 {
			bs.H2 = true
		}
		bs.Refs = append(bs.Refs, r.ref)
	}
	if len(bs.Refs) == 0 {
		return nil, false
	}
	sort.Slice(bs.Refs, func(i, j int) bool {
		a, b := bs.Refs[i], bs.Refs[j]
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		if a.Service != b.Service {
			return a.Service < b.Service
		}
		return a.Port < b.Port
	})
	if len(bs.Refs) == 1 && bs.ErrorWeight == 0 {
		r := bs.Refs[0]
		bs.Refs[0].Weight = 1
		bs.Name = prefix + r.Namespace + "_" + r.Service + "_" + strconv.FormatInt(r.Port, 10)
		return bs, true
	}
	h := sha256.New()
	for _, r := range bs.Refs {
		fmt.Fprintf(h, "%s/%s/%d/%d\n", r.Namespace, r.Service, r.Port, r.Weight)
	}
	fmt.Fprintf(h, "error/%d/%v\n", bs.ErrorWeight, bs.H2)
	bs.Name = prefix + "w_" + hex.EncodeToString(h.Sum(nil))[:16]
	return bs, true
}

// shortID returns a stable 12-hex-digit id for the parts.
func shortID(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))[:12]
}
