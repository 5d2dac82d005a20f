package gatewayapi

import (
	"strings"

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
	// grantsSig identifies the grants by namespace, name and
	// resourceVersion; grantsStable is false when one has no
	// resourceVersion (then no signature tells two apart).
	grantsSig    string
	grantsStable bool
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
		services:   map[Ref][]servicePort{},
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
	for _, o := range s.List(AliasServices) {
		md := obj(o, "metadata")
		ref := Ref{Namespace: str(md, "namespace"), Name: str(md, "name")}
		var ports []servicePort
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
				ports = append(ports, servicePort{name: str(pm, "name"), port: n, appProtocol: str(pm, "appProtocol")})
			}
		}
		w.services[ref] = ports
	}
	for _, o := range s.List(AliasSecrets) {
		md := obj(o, "metadata")
		w.secrets[Ref{Namespace: str(md, "namespace"), Name: str(md, "name")}] = o
	}
	w.grants = list[gatewayv1.ReferenceGrant](s, AliasReferenceGrants, opts.Cache)
	if opts.Cache != nil {
		var sig strings.Builder
		w.grantsStable = true
		for _, g := range w.grants {
			if g.ResourceVersion == "" {
				w.grantsStable = false
			}
			sig.WriteString(g.Namespace + "/" + g.Name + "@" + g.ResourceVersion + "\n")
		}
		w.grantsSig = sig.String()
	}
	return w
}

// granted says whether a ReferenceGrant in toNS lets objects of
// fromGroup/fromKind in fromNS refer to the toGroup/toKind object toName.
func (w *world) granted(fromGroup, fromKind, fromNS, toGroup, toKind, toNS, toName string) bool {
	if w.rec != nil {
		w.rec.grants, w.rec.grantsSig = true, w.grantsSig
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
