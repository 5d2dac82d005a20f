package gatewayapi

import (
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// tlsRoute is a TLSRoute: connections whose SNI matches go, still
// encrypted, to its backends.
type tlsRoute struct {
	backend *backendSet // nil: no backend resolves, connections are rejected
}

func (w *world) resolveTLSRoute(tr *gatewayv1.TLSRoute) *route {
	r := newRoute(kindTLS, &tr.ObjectMeta, tr.Spec.ParentRefs, tr.Spec.Hostnames)
	r.tls = &tlsRoute{}
	var rr []refResult
	for _, rule := range tr.Spec.Rules {
		for _, b := range rule.BackendRefs {
			rr = append(rr, w.resolveBackend(kindTLS, r.ref.Namespace, b))
		}
	}
	r.resolved = resolvedRefs(rr)
	r.tls.backend, _ = newBackendSet("tcp", "bt_", false, rr)
	return r
}
