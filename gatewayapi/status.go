package gatewayapi

import (
	"net/netip"
	"reflect"
	"slices"
	"sort"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	"sigs.k8s.io/gateway-api/pkg/features"
)

// SupportedFeatures returns the Gateway API features HAPTIC declares in
// GatewayClass status.supportedFeatures, sorted: the ones the stock
// gateway library implements and its tests exercise through real
// HAProxy (libraries/gateway_*_test.go).
func SupportedFeatures() []string {
	fs := []features.FeatureName{
		// Core.
		features.SupportGateway,
		features.SupportHTTPRoute,
		features.SupportReferenceGrant,
		features.SupportGRPCRoute,
		features.SupportTLSRoute,
		// Extended.
		features.SupportGatewayPort8080,
		features.SupportGatewayHTTPListenerIsolation,
		features.SupportHTTPRouteParentRefPort,
		features.SupportHTTPRouteMethodMatching,
		features.SupportHTTPRouteQueryParamMatching,
		features.SupportHTTPRouteResponseHeaderModification,
		features.SupportHTTPRouteHostRewrite,
		features.SupportHTTPRoutePathRewrite,
		features.SupportHTTPRoutePathRedirect,
		features.SupportHTTPRoutePortRedirect,
		features.SupportHTTPRouteSchemeRedirect,
		features.SupportHTTPRoute303RedirectStatusCode,
		features.SupportHTTPRoute307RedirectStatusCode,
		features.SupportHTTPRoute308RedirectStatusCode,
		features.SupportHTTPRouteNamedRouteRule,
		features.SupportGRPCRouteNamedRouteRule,
		features.SupportHTTPRouteBackendProtocolH2C,
		features.SupportHTTPRouteBackendProtocolWebSocket,
		features.SupportHTTPRouteDestinationPortMatching,
		features.SupportHTTPRouteRequestTimeout,
		features.SupportHTTPRouteBackendTimeout,
		features.SupportGatewayAddressEmpty,
		features.SupportHTTPRouteBackendRequestHeaderModification,
		features.SupportHTTPRouteRetry,
		features.SupportGatewayInfrastructure,
		features.SupportGatewayHTTPSListenerDetectMisdirectedRequests,
		features.SupportHTTPRouteCORS,
		features.SupportTLSRouteModeTerminate,
		features.SupportTLSRouteModeMixed,
	}
	out := make([]string, 0, len(fs))
	for _, f := range fs {
		out = append(out, string(f))
	}
	sort.Strings(out)
	return out
}

// Statuses returns the whole status of every GatewayClass of our
// controllerName, every Gateway of those classes, and every route that
// has a parentRef to one of those Gateways, sorted by kind, namespace and
// name. fleet reports what the data plane of a Gateway runs; nil means no
// fleet anywhere yet. A route's status lists only the parents of ours.
func (m *Model) Statuses(fleet func(Ref) Fleet) []Status {
	var out []Status
	for _, c := range m.classes {
		feats := make([]any, 0, len(m.opts.SupportedFeatures))
		for _, f := range m.opts.SupportedFeatures {
			feats = append(feats, map[string]any{"name": f})
		}
		out = append(out, Status{APIVersion: apiVersion, Kind: "GatewayClass", Name: c.name, Status: map[string]any{
			"conditions":        conditions(c.generation, c.accepted),
			"supportedFeatures": feats,
		}})
	}
	for _, g := range m.order {
		var f Fleet
		if fleet != nil {
			f = fleet(g.ref)
		}
		out = append(out, Status{APIVersion: apiVersion, Kind: kindGateway, Namespace: g.ref.Namespace, Name: g.ref.Name, Status: g.status(f)})
	}
	for i := range m.routes {
		rp := &m.routes[i]
		out = append(out, Status{APIVersion: apiVersion, Kind: rp.r.kind, Namespace: rp.r.ref.Namespace, Name: rp.r.ref.Name, Status: m.routeStatus(rp)})
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Kind != b.Kind {
			return a.Kind < b.Kind
		}
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		return a.Name < b.Name
	})
	return out
}

// routeStatus is a route's .status: the parents of ours. A route
// resolved through a [Cache] whose status came out the same in an
// earlier Statuses gets the very same map again.
func (m *Model) routeStatus(rp *routeParents) map[string]any {
	r := rp.r
	if rp.entry != nil {
		if s := rp.entry.status.Load(); s != nil && s.generation == r.generation && s.controllerName == m.opts.ControllerName && sameParents(s.parents, rp.parents) {
			return s.status
		}
	}
	parents := make([]any, 0, len(rp.parents))
	for _, p := range rp.parents {
		parents = append(parents, map[string]any{
			"parentRef":      parentRefShape(p.ref),
			"controllerName": m.opts.ControllerName,
			"conditions":     conditions(r.generation, p.conds...),
		})
	}
	status := map[string]any{"parents": parents}
	if rp.entry != nil {
		rp.entry.status.Store(&routeStatus{generation: r.generation, controllerName: m.opts.ControllerName, parents: rp.parents, status: status})
	}
	return status
}

// routeStatus is the .status made for one route and what it was made of.
type routeStatus struct {
	generation     int64
	controllerName string
	parents        []parentStatus // of an immutable Model
	status         map[string]any
}

func sameParents(a, b []parentStatus) bool {
	if len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0]) {
		return true // one Build's parents, reused by the next
	}
	return slices.EqualFunc(a, b, func(x, y parentStatus) bool {
		return slices.Equal(x.conds, y.conds) && equalParentRef(x.ref, y.ref)
	})
}

// status is the Gateway's .status given its fleet.
func (g *gateway) status(f Fleet) map[string]any {
	accepted := g.accepted()
	if g.rejected != nil {
		accepted = *g.rejected
	}
	addrs := make([]any, 0, len(f.Addresses))
	for _, a := range f.Addresses {
		typ := string(gatewayv1.HostnameAddressType)
		if _, err := netip.ParseAddr(a); err == nil {
			typ = string(gatewayv1.IPAddressType)
		}
		addrs = append(addrs, map[string]any{"type": typ, "value": a})
	}
	programmed := cond(string(gatewayv1.GatewayConditionProgrammed), true, string(gatewayv1.GatewayReasonProgrammed), "every HAProxy pod of the Gateway runs its configuration")
	switch {
	case accepted.Status != "True":
		programmed = cond(string(gatewayv1.GatewayConditionProgrammed), false, string(gatewayv1.GatewayReasonInvalid), "the Gateway is not accepted")
	case len(f.Addresses) == 0:
		programmed = cond(string(gatewayv1.GatewayConditionProgrammed), false, string(gatewayv1.GatewayReasonAddressNotAssigned), orDefault(f.Message, "no address assigned yet"))
	case f.ProgrammedGeneration < g.generation:
		programmed = cond(string(gatewayv1.GatewayConditionProgrammed), false, string(gatewayv1.GatewayReasonPending), orDefault(f.Message, "waiting for the HAProxy pods to run the configuration"))
	}
	listeners := make([]any, 0, len(g.listeners))
	for _, l := range g.listeners {
		conds := append([]condition(nil), l.conds...)
		for i := range conds {
			if conds[i].Type == string(gatewayv1.ListenerConditionProgrammed) && conds[i].Status == "True" && programmed.Status != "True" {
				conds[i] = cond(conds[i].Type, false, string(gatewayv1.ListenerReasonPending), programmed.Message)
			}
		}
		kinds := make([]any, 0, len(l.kinds))
		for _, k := range sortedKinds(l.kinds) {
			kinds = append(kinds, map[string]any{"group": groupGateway, "kind": k})
		}
		listeners = append(listeners, map[string]any{
			"name":           l.name,
			"supportedKinds": kinds,
			"attachedRoutes": int64(l.attached),
			"conditions":     conditions(g.generation, conds...),
		})
	}
	return map[string]any{
		"addresses":  addrs,
		"conditions": conditions(g.generation, accepted, programmed),
		"listeners":  listeners,
	}
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// conditions encodes conditions with their observedGeneration.
func conditions(gen int64, cs ...condition) []any {
	out := make([]any, 0, len(cs))
	for _, c := range cs {
		out = append(out, map[string]any{
			"type":               c.Type,
			"status":             c.Status,
			"reason":             c.Reason,
			"message":            c.Message,
			"observedGeneration": gen,
		})
	}
	return out
}

// parentRefShape echoes a parentRef as the route spells it (the API
// server has defaulted group and kind).
func parentRefShape(p gatewayv1.ParentReference) map[string]any {
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&p)
	if err != nil {
		return map[string]any{"name": string(p.Name)}
	}
	return normalizeShape(u).(map[string]any)
}

// normalizeShape turns the converter's integer types into int64.
func normalizeShape(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = normalizeShape(e)
		}
	case []any:
		for i, e := range x {
			x[i] = normalizeShape(e)
		}
	case int:
		return int64(x)
	case int32:
		return int64(x)
	}
	return v
}

// WithTransitionTimes returns st with lastTransitionTime set on every
// condition: the time of the same condition in current (the object's
// .status as the API server has it) when its status did not change, now
// otherwise. Conditions are matched by type, listener conditions by
// listener name too, route conditions by parentRef and controllerName
// too.
func WithTransitionTimes(st Status, current map[string]any, now time.Time) Status {
	stamp := now.UTC().Format(time.RFC3339)
	next := deepCopy(st.Status).(map[string]any)
	stampConditions(next, current, stamp)
	if ls, ok := next["listeners"].([]any); ok {
		cur, _ := current["listeners"].([]any)
		for _, l := range ls {
			lm, _ := l.(map[string]any)
			stampConditions(lm, findBy(cur, func(c map[string]any) bool { return c["name"] == lm["name"] }), stamp)
		}
	}
	if ps, ok := next["parents"].([]any); ok {
		cur, _ := current["parents"].([]any)
		for _, p := range ps {
			pm, _ := p.(map[string]any)
			stampConditions(pm, findBy(cur, func(c map[string]any) bool {
				return c["controllerName"] == pm["controllerName"] && sameParentRef(c["parentRef"], pm["parentRef"])
			}), stamp)
		}
	}
	st.Status = next
	return st
}

// sameParentRef compares two parentRefs with the API's defaults applied.
func sameParentRef(a, b any) bool {
	am, _ := a.(map[string]any)
	bm, _ := b.(map[string]any)
	norm := func(m map[string]any) map[string]any {
		out := map[string]any{"group": groupGateway, "kind": kindGateway}
		for k, v := range m {
			if n, ok := num(m, k); ok {
				v = n
			}
			out[k] = v
		}
		return out
	}
	return reflect.DeepEqual(norm(am), norm(bm))
}

func findBy(l []any, f func(map[string]any) bool) map[string]any {
	for _, x := range l {
		if m, ok := x.(map[string]any); ok && f(m) {
			return m
		}
	}
	return nil
}

func stampConditions(next, current map[string]any, stamp string) {
	if next == nil {
		return
	}
	cs, _ := next["conditions"].([]any)
	cur, _ := current["conditions"].([]any)
	for _, c := range cs {
		cm, ok := c.(map[string]any)
		if !ok {
			continue
		}
		cm["lastTransitionTime"] = stamp
		if old := findBy(cur, func(o map[string]any) bool { return o["type"] == cm["type"] }); old != nil && old["status"] == cm["status"] {
			if t, ok := old["lastTransitionTime"].(string); ok && t != "" {
				cm["lastTransitionTime"] = t
			}
		}
	}
}

func deepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = deepCopy(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = deepCopy(e)
		}
		return out
	}
	return v
}
