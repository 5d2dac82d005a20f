package gatewayapi

import (
	"slices"
	"unsafe"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/haptic-io/haptic/templating"
)

// world is what Build reads from the store besides Gateways and routes:
// the lookups that resolve references.
type world struct {
	opts       Options
	namespaces map[string]map[string]string // namespace -> labels
	services   map[Ref][]servicePort
	secrets    map[Ref]map[string]any
	grants     []*gatewayv1.ReferenceGrant
	// rec, while a route is resolved for the cache, collects the lookups
	// its resolution makes.
	rec *routeDeps
}

// servicePort is one port of a Service.
type servicePort struct {
	name        string
	port        int64
	appProtocol string
}

func newWorld(s templating.Store, opts Options) *world {
	w := &world{
		opts:       opts,
		namespaces: map[string]map[string]string{},
		secrets:    map[Ref]map[string]any{},
	}
	for _, o := range s.List(AliasNamespaces) {
		md := obj(o, "metadata")
		name := str(md, "name")
		if name == "" {
			continue
		}
		labs := map[string]string{}
		for k, v := range obj(md, "labels") {
			if s, ok := v.(string); ok {
				labs[k] = s
			}
		}
		// The API server sets this label on every namespace; a store fed
		// from files may not have it.
		if _, ok := labs["kubernetes.io/metadata.name"]; !ok {
			labs["kubernetes.io/metadata.name"] = name
		}
		w.namespaces[name] = labs
	}
	w.services = servicesOf(s.List(AliasServices), opts.Cache)
	for _, o := range s.List(AliasSecrets) {
		md := obj(o, "metadata")
		w.secrets[Ref{Namespace: str(md, "namespace"), Name: str(md, "name")}] = o
	}
	w.grants = list[gatewayv1.ReferenceGrant](s, AliasReferenceGrants, opts.Cache)
	return w
}

// granted says whether a ReferenceGrant in toNS lets objects of
// fromGroup/fromKind in fromNS refer to the toGroup/toKind object toName.
func (w *world) granted(fromGroup, fromKind, fromNS, toGroup, toKind, toNS, toName string) bool {
	if w.rec != nil {
		w.rec.grants, w.rec.grantObjs = true, w.grants
	}
	for _, g := range w.grants {
		if g.Namespace != toNS {
			continue
		}
		from := false
		for _, f := range g.Spec.From {
			if string(f.Group) == fromGroup && string(f.Kind) == fromKind && string(f.Namespace) == fromNS {
				from = true
				break
			}
		}
		if !from {
			continue
		}
		for _, t := range g.Spec.To {
			if string(t.Group) == toGroup && string(t.Kind) == toKind && (t.Name == nil || *t.Name == "" || string(*t.Name) == toName) {
				return true
			}
		}
	}
	return false
}

// servicesOf is the Service lookup of objs: the previous Build's when c
// holds one made of the very same objects, else one made with the ports
// c knows of each object.
func servicesOf(objs []map[string]any, c *Cache) map[Ref][]servicePort {
	if c != nil && c.services != nil && len(objs) == len(c.serviceObjs) {
		same := true
		for i, o := range objs {
			if objectKey(o) != objectKey(c.serviceObjs[i]) {
				same = false
				break
			}
		}
		if same {
			return c.services
		}
	}
	out := make(map[Ref][]servicePort, len(objs))
	var ports map[unsafe.Pointer]serviceEntry // the servicePorts of out
	if c != nil {
		ports = reuse(c.sparePorts, len(objs))
	}
	for _, o := range objs {
		var k unsafe.Pointer
		if c != nil {
			k = objectKey(o)
			if e, ok := c.servicePorts[k]; ok {
				out[e.ref] = e.ports
				ports[k] = e
				continue
			}
		}
		md := obj(o, "metadata")
		ref := Ref{Namespace: str(md, "namespace"), Name: str(md, "name")}
		var sp []servicePort
		if ps, ok := obj(o, "spec")["ports"].([]any); ok {
			for _, p := range ps {
				pm, ok := p.(map[string]any)
				if !ok {
					continue
				}
				n, ok := num(pm, "port")
				if !ok {
					continue
				}
				sp = append(sp, servicePort{name: str(pm, "name"), port: n, appProtocol: str(pm, "appProtocol")})
			}
		}
		out[ref] = sp
		if c != nil {
			ports[k] = serviceEntry{obj: o, ref: ref, ports: sp}
		}
	}
	if c != nil {
		// The lookup is kept with the objects it was made of, for the
		// next Build; neither is modified after this.
		c.services, c.serviceObjs = out, slices.Clone(objs)
		retire(c.servicePorts, &c.sparePorts)
		c.servicePorts = ports
	}
	return out
}
