package gatewayapi

import (
	"regexp"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// grpcRoute is a GRPCRoute rewritten into HTTP rules: a gRPC call is an
// HTTP/2 POST to /<service>/<method>.
type grpcRoute struct {
	http *httpRoute
}

// resolveGRPCRoute turns a GRPCRoute into a route whose rules match
// paths: service and method give an Exact path, a service alone a path
// prefix, a method alone or a RegularExpression match a path regex.
func (w *world) resolveGRPCRoute(gr *gatewayv1.GRPCRoute) *route {
	r := newRoute(kindGRPC, &gr.ObjectMeta, gr.Spec.ParentRefs, gr.Spec.Hostnames)
	r.grpc = &grpcRoute{http: &httpRoute{}}
	var results []refResult
	for i, rule := range gr.Spec.Rules {
		hr := &httpRule{index: i}
		addMatches(r, hr, rule.Matches, grpcMatch)
		for _, f := range rule.Filters {
			hf := gatewayv1.HTTPRouteFilter{RequestHeaderModifier: f.RequestHeaderModifier, ResponseHeaderModifier: f.ResponseHeaderModifier}
			switch f.Type {
			case gatewayv1.GRPCRouteFilterRequestHeaderModifier:
				hf.Type = gatewayv1.HTTPRouteFilterRequestHeaderModifier
			case gatewayv1.GRPCRouteFilterResponseHeaderModifier:
				hf.Type = gatewayv1.HTTPRouteFilterResponseHeaderModifier
			default:
				hf.Type = gatewayv1.HTTPRouteFilterType(f.Type)
			}
			r.keepFilter(hr, hf)
		}
		var rr []refResult
		for _, b := range rule.BackendRefs {
			res := w.resolveBackend(kindGRPC, r.ref.Namespace, b.BackendRef)
			if res.reason == "" && len(b.Filters) > 0 {
				res.reason, res.msg = string(gatewayv1.RouteReasonUnsupportedValue), "backendRef filters are not supported"
			}
			rr = append(rr, res)
		}
		results = append(results, rr...)
		hr.backend, _ = newBackendSet("http", "bg_", true, rr)
		r.grpc.http.add(hr)
	}
	r.resolved = resolvedRefs(results)
	return r
}

var grpcName = regexp.MustCompile(`^[A-Za-z0-9_.]+$`)

func grpcMatch(m gatewayv1.GRPCRouteMatch) (httpMatch, string) {
	nm := httpMatch{pathType: string(gatewayv1.PathMatchPathPrefix), path: "/"}
	if mm := m.Method; mm != nil {
		t := gatewayv1.GRPCMethodMatchExact
		if mm.Type != nil {
			t = *mm.Type
		}
		svc, meth := "", ""
		if mm.Service != nil {
			svc = *mm.Service
		}
		if mm.Method != nil {
			meth = *mm.Method
		}
		switch t {
		case gatewayv1.GRPCMethodMatchExact:
			if svc != "" && !grpcName.MatchString(svc) || meth != "" && !grpcName.MatchString(meth) {
				return nm, "gRPC service or method name not supported"
			}
			switch {
			case svc != "" && meth != "":
				nm.pathType, nm.path = string(gatewayv1.PathMatchExact), "/"+svc+"/"+meth
			case svc != "":
				nm.path = "/" + svc
			case meth != "":
				nm.pathType, nm.path = string(gatewayv1.PathMatchRegularExpression), "^/[^/]+/"+regexp.QuoteMeta(meth)+"$"
			}
		case gatewayv1.GRPCMethodMatchRegularExpression:
			if svc == "" {
				svc = "[^/]+"
			}
			if meth == "" {
				meth = "[^/]+"
			}
			if !safeValue(svc) || !safeValue(meth) {
				return nm, "gRPC method regular expression has control characters"
			}
			nm.pathType, nm.path = string(gatewayv1.PathMatchRegularExpression), "^/"+svc+"/"+meth+"$"
		default:
			return nm, "gRPC method match type not supported"
		}
	}
	for _, h := range m.Headers {
		t := gatewayv1.GRPCHeaderMatchExact
		if h.Type != nil {
			t = *h.Type
		}
		if !safeHeaderName(string(h.Name)) || !safeValue(h.Value) {
			return nm, "gRPC header match name or value not supported"
		}
		nm.headers = appendMatch(nm.headers, valueMatch{Name: lower(string(h.Name)), Value: h.Value, Regex: t == gatewayv1.GRPCHeaderMatchRegularExpression}, true)
	}
	return nm, ""
}
