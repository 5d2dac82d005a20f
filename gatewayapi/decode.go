package gatewayapi

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/haptic-io/haptic/store"
	"github.com/haptic-io/haptic/templating"
)

// The store aliases Build reads; the gateway library watches them under
// these names.
const (
	AliasGatewayClasses  = "gatewayclasses"
	AliasGateways        = "gateways"
	AliasHTTPRoutes      = "httproutes"
	AliasGRPCRoutes      = "grpcroutes"
	AliasTLSRoutes       = "tlsroutes"
	AliasReferenceGrants = "referencegrants"
	AliasServices        = "services"
	AliasSecrets         = "secrets"
	AliasNamespaces      = "namespaces"
)

// decode converts one unstructured object into a typed API object. The
// converter reports shapes it cannot read as errors; the recover is there
// because a malformed object must never take the render down.
func decode(obj map[string]any, into any) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("decode: %v", r)
		}
	}()
	return runtime.DefaultUnstructuredConverter.FromUnstructured(obj, into)
}

// list decodes every object of alias (through c when it is not nil);
// objects that do not decode are skipped: a route of a shape the API
// server would refuse cannot be given a status either. The decoded
// values are shared with later Builds through c: never modify them.
func list[T any](s templating.Store, alias string, c *Cache) []*T {
	objs := s.List(alias)
	out := make([]*T, 0, len(objs))
	for _, o := range objs {
		if c != nil {
			if v, ok := c.get(alias, o); ok {
				if t, ok := v.(*T); ok && t != nil {
					out = append(out, t)
				}
				continue
			}
		}
		v := new(T)
		if decode(o, v) != nil {
			v = nil
		}
		if c != nil {
			c.put(alias, o, v) // a failed decode (nil) is remembered too
		}
		if v != nil {
			out = append(out, v)
		}
	}
	return out
}

// str, obj and num read raw fields of objects Build does not decode
// (Services, Secrets, Namespaces); a field of another type reads as zero.
func str(m map[string]any, key string) string {
	s, _ := m[key].(string)
	return s
}

func obj(m map[string]any, key string) map[string]any {
	o, _ := m[key].(map[string]any)
	return o
}

func num(m map[string]any, key string) (int64, bool) {
	switch v := m[key].(type) {
	case int64:
		return v, true
	case int:
		return int64(v), true
	case int32:
		return int64(v), true
	case float64:
		if v == float64(int64(v)) {
			return int64(v), true
		}
	}
	return 0, false
}

// Group and kind names used throughout.
const (
	groupGateway = gatewayv1.GroupName
	kindGateway  = "Gateway"
	kindHTTP     = "HTTPRoute"
	kindGRPC     = "GRPCRoute"
	kindTLS      = "TLSRoute"
	kindService  = "Service"
	kindSecret   = "Secret"
)

// WatchedResources returns the store aliases Build reads with the
// resources they watch (Gateway API v1 and core v1), as the gateway
// library declares them.
func WatchedResources() map[string]store.WatchedResource {
	gw := func(r string) store.WatchedResource {
		return store.WatchedResource{APIVersion: gatewayv1.GroupVersion.String(), Resource: r, IndexBy: []string{"metadata.namespace", "metadata.name"}}
	}
	core := func(r string) store.WatchedResource {
		return store.WatchedResource{APIVersion: "v1", Resource: r, IndexBy: []string{"metadata.namespace", "metadata.name"}}
	}
	return map[string]store.WatchedResource{
		AliasGatewayClasses:  gw("gatewayclasses"),
		AliasGateways:        gw("gateways"),
		AliasHTTPRoutes:      gw("httproutes"),
		AliasGRPCRoutes:      gw("grpcroutes"),
		AliasTLSRoutes:       gw("tlsroutes"),
		AliasReferenceGrants: gw("referencegrants"),
		AliasServices:        core("services"),
		AliasSecrets:         core("secrets"),
		AliasNamespaces:      {APIVersion: "v1", Resource: "namespaces", IndexBy: []string{"metadata.name"}},
	}
}
