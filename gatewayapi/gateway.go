package gatewayapi

import (
	"crypto/tls"
	"encoding/base64"
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// gateway is the resolved state of one Gateway of one of our classes.
type gateway struct {
	ref        Ref
	generation int64
	obj        *gatewayv1.Gateway
	class      string
	// index is the Gateway's place in Model.order.
	index     int
	listeners []*listener
	// rejected, when set, is the Accepted condition of a Gateway HAPTIC
	// does not serve as a whole (unsupported spec.addresses).
	rejected *condition
	// routes attached to at least one listener, in attachment order.
	http []*attachedRoute
	tls  []*attachedRoute
	grpc []*attachedRoute
	// context is the render context, built once.
	context map[string]any
}

// listener is one listener of a Gateway with its computed conditions.
type listener struct {
	spec     gatewayv1.Listener
	index    int // in the Gateway's listeners
	name     string
	port     int32
	protocol string
	// terminate is true for a TLS listener that terminates TLS (mode
	// Terminate) and forwards the clear stream.
	terminate bool
	hostname  string // "" means any
	// kinds are the route kinds it supports (status.supportedKinds).
	kinds []string
	// acceptsRoutes is false for a listener that cannot carry routes
	// (unsupported protocol, conflicted).
	acceptsRoutes bool
	conds         []condition
	certs         []certificate
	attached      int32
	// nsFrom is Same, All or Selector; sel is the parsed selector.
	nsFrom string
	sel    labels.Selector
}

// certificate is a listener's resolved certificate: the PEM bundle that
// the library writes under certs/.
type certificate struct {
	Name      string `json:"name"` // file name: <namespace>_<secret>.pem
	Namespace string `json:"namespace"`
	Secret    string `json:"secret"`
	PEM       string `json:"pem"`
}

// condition is one status condition before it is encoded.
type condition struct {
	Type, Status, Reason, Message string
}

func cond(typ string, ok bool, reason, msg string) condition {
	s := "False"
	if ok {
		s = "True"
	}
	return condition{Type: typ, Status: s, Reason: reason, Message: msg}
}

// supportedRouteKinds is what each listener protocol serves.
var supportedRouteKinds = map[string][]string{
	"HTTP":  {kindHTTP, kindGRPC},
	"HTTPS": {kindHTTP, kindGRPC},
	"TLS":   {kindTLS},
}

// resolveGateway computes the listeners of one Gateway of ours.
func (w *world) resolveGateway(gw *gatewayv1.Gateway) *gateway {
	g := &gateway{
		ref:        Ref{Namespace: gw.Namespace, Name: gw.Name},
		generation: gw.Generation,
		obj:        gw,
		class:      string(gw.Spec.GatewayClassName),
	}
	for i := range gw.Spec.Listeners {
		l := w.resolveListener(g, &gw.Spec.Listeners[i])
		l.index = i
		g.listeners = append(g.listeners, l)
	}
	markConflicts(g.listeners)
	return g
}

func (w *world) resolveListener(g *gateway, l *gatewayv1.Listener) *listener {
	li := &listener{
		spec:     *l,
		name:     string(l.Name),
		port:     int32(l.Port),
		protocol: string(l.Protocol),
		nsFrom:   string(gatewayv1.NamespacesFromSame),
	}
	if l.Hostname != nil {
		li.hostname = string(*l.Hostname)
	}
	kinds, protoOK := supportedRouteKinds[li.protocol]
	accepted := cond(string(gatewayv1.ListenerConditionAccepted), true, string(gatewayv1.ListenerReasonAccepted), "listener accepted")
	resolved := cond(string(gatewayv1.ListenerConditionResolvedRefs), true, string(gatewayv1.ListenerReasonResolvedRefs), "all references resolved")
	programmable := true
	if !protoOK {
		accepted = cond(string(gatewayv1.ListenerConditionAccepted), false, string(gatewayv1.ListenerReasonUnsupportedProtocol), "protocol "+li.protocol+" is not supported (HTTP, HTTPS and TLS are)")
		programmable = false
	}
	if li.hostname != "" && hostnameProblem(li.hostname) != "" {
		accepted = cond(string(gatewayv1.ListenerConditionAccepted), false, string(gatewayv1.ListenerReasonUnsupportedValue), "hostname "+li.hostname+": "+hostnameProblem(li.hostname))
		programmable = false
	}
	if !validName(li.name) || li.port < 1 || li.port > 65535 {
		accepted = cond(string(gatewayv1.ListenerConditionAccepted), false, string(gatewayv1.ListenerReasonUnsupportedValue), "listener name or port out of range")
		programmable = false
	}

	// Route kinds: the listener's own list filtered to what its protocol
	// serves, or every kind the protocol serves.
	if protoOK {
		if l.AllowedRoutes != nil && len(l.AllowedRoutes.Kinds) > 0 {
			bad := false
			for _, k := range l.AllowedRoutes.Kinds {
				grp := groupGateway
				if k.Group != nil {
					grp = string(*k.Group)
				}
				ok := grp == groupGateway && contains(kinds, string(k.Kind))
				if ok {
					if !contains(li.kinds, string(k.Kind)) {
						li.kinds = append(li.kinds, string(k.Kind))
					}
				} else {
					bad = true
				}
			}
			if bad {
				resolved = cond(string(gatewayv1.ListenerConditionResolvedRefs), false, string(gatewayv1.ListenerReasonInvalidRouteKinds), "allowedRoutes.kinds names a kind this listener cannot serve")
			}
		} else {
			li.kinds = append(li.kinds, kinds...)
		}
	}

	if l.AllowedRoutes != nil && l.AllowedRoutes.Namespaces != nil {
		ns := l.AllowedRoutes.Namespaces
		if ns.From != nil {
			li.nsFrom = string(*ns.From)
		}
		if li.nsFrom == string(gatewayv1.NamespacesFromSelector) {
			sel := labels.Nothing()
			if ns.Selector != nil {
				if s, err := metav1.LabelSelectorAsSelector(ns.Selector); err == nil {
					sel = s
				} else {
					accepted = cond(string(gatewayv1.ListenerConditionAccepted), false, string(gatewayv1.ListenerReasonUnsupportedValue), "allowedRoutes.namespaces.selector: "+err.Error())
					programmable = false
				}
			}
			li.sel = sel
		}
	}

	// TLS.
	mode := string(gatewayv1.TLSModeTerminate)
	if l.TLS != nil && l.TLS.Mode != nil {
		mode = string(*l.TLS.Mode)
	}
	if li.protocol == "TLS" && mode == string(gatewayv1.TLSModeTerminate) {
		li.terminate = true
	}
	switch {
	case li.protocol == "HTTPS" || li.terminate:
		if mode != string(gatewayv1.TLSModeTerminate) {
			accepted = cond(string(gatewayv1.ListenerConditionAccepted), false, string(gatewayv1.ListenerReasonUnsupportedValue), "an HTTPS listener terminates TLS (tls.mode Terminate)")
			programmable = false
			break
		}
		var refs []gatewayv1.SecretObjectReference
		if l.TLS != nil {
			refs = l.TLS.CertificateRefs
		}
		if len(refs) == 0 {
			resolved = cond(string(gatewayv1.ListenerConditionResolvedRefs), false, string(gatewayv1.ListenerReasonInvalidCertificateRef), "a listener that terminates TLS needs tls.certificateRefs")
		}
		for _, ref := range refs {
			c, reason, msg := w.resolveCertificate(g.ref.Namespace, ref)
			if reason != "" {
				if resolved.Status == "True" || reason == string(gatewayv1.ListenerReasonRefNotPermitted) {
					resolved = cond(string(gatewayv1.ListenerConditionResolvedRefs), false, reason, msg)
				}
				continue
			}
			li.certs = append(li.certs, c)
		}
		if len(li.certs) == 0 {
			programmable = false
		}
	case li.protocol == "TLS":
		if mode != string(gatewayv1.TLSModePassthrough) {
			accepted = cond(string(gatewayv1.ListenerConditionAccepted), false, string(gatewayv1.ListenerReasonUnsupportedValue), "tls.mode "+mode+" is not supported (Passthrough and Terminate are)")
			programmable = false
		}
	}

	li.acceptsRoutes = accepted.Status == "True"
	li.conds = []condition{accepted, resolved, cond(string(gatewayv1.ListenerConditionConflicted), false, string(gatewayv1.ListenerReasonNoConflicts), "no conflicts")}
	if programmable && li.acceptsRoutes {
		li.conds = append(li.conds, cond(string(gatewayv1.ListenerConditionProgrammed), true, string(gatewayv1.ListenerReasonProgrammed), "listener programmed"))
	} else {
		li.conds = append(li.conds, cond(string(gatewayv1.ListenerConditionProgrammed), false, string(gatewayv1.ListenerReasonInvalid), "listener is not valid"))
	}
	if !li.acceptsRoutes {
		li.kinds = nil
	}
	return li
}

// markConflicts applies the listener compatibility rules: on one port,
// every listener has the same protocol family (HTTP, or HTTPS, or TLS
// of either mode) and a distinct hostname.
func markConflicts(ls []*listener) {
	byPort := map[int32][]*listener{}
	for _, l := range ls {
		if l.acceptsRoutes {
			byPort[l.port] = append(byPort[l.port], l)
		}
	}
	for _, group := range byPort {
		protos := map[string]bool{}
		for _, l := range group {
			protos[l.protocol] = true
		}
		if len(protos) > 1 {
			for _, l := range group {
				l.conflict(string(gatewayv1.ListenerReasonProtocolConflict), "another listener on port uses another protocol")
			}
			continue
		}
		hosts := map[string]int{}
		for _, l := range group {
			hosts[l.hostname]++
		}
		for _, l := range group {
			if hosts[l.hostname] > 1 {
				l.conflict(string(gatewayv1.ListenerReasonHostnameConflict), "another listener on this port has the same hostname")
			}
		}
	}
}

func (l *listener) conflict(reason, msg string) {
	l.acceptsRoutes = false
	l.kinds = nil
	l.certs = nil
	for i := range l.conds {
		switch gatewayv1.ListenerConditionType(l.conds[i].Type) {
		case gatewayv1.ListenerConditionAccepted:
			l.conds[i] = cond(l.conds[i].Type, false, reason, msg)
		case gatewayv1.ListenerConditionConflicted:
			l.conds[i] = cond(l.conds[i].Type, true, reason, msg)
		case gatewayv1.ListenerConditionProgrammed:
			l.conds[i] = cond(l.conds[i].Type, false, string(gatewayv1.ListenerReasonInvalid), msg)
		}
	}
}

// resolveCertificate resolves one certificateRef of a listener of a
// Gateway in namespace ns.
func (w *world) resolveCertificate(ns string, ref gatewayv1.SecretObjectReference) (certificate, string, string) {
	grp, kind := "", kindSecret
	if ref.Group != nil {
		grp = string(*ref.Group)
	}
	if ref.Kind != nil {
		kind = string(*ref.Kind)
	}
	target := ns
	if ref.Namespace != nil && *ref.Namespace != "" {
		target = string(*ref.Namespace)
	}
	name := string(ref.Name)
	if grp != "" || kind != kindSecret {
		return certificate{}, string(gatewayv1.ListenerReasonInvalidCertificateRef), "certificateRef " + grp + "/" + kind + " " + name + ": only core Secrets are supported"
	}
	if target != ns && !w.granted(groupGateway, kindGateway, ns, "", kindSecret, target, name) {
		return certificate{}, string(gatewayv1.ListenerReasonRefNotPermitted), "certificateRef to Secret " + target + "/" + name + " is not permitted by a ReferenceGrant"
	}
	s, ok := w.secrets[Ref{Namespace: target, Name: name}]
	if !ok {
		return certificate{}, string(gatewayv1.ListenerReasonInvalidCertificateRef), "Secret " + target + "/" + name + " not found"
	}
	data := obj(s, "data")
	crt, errC := base64.StdEncoding.DecodeString(str(data, "tls.crt"))
	key, errK := base64.StdEncoding.DecodeString(str(data, "tls.key"))
	if errC != nil || errK != nil || len(crt) == 0 || len(key) == 0 {
		return certificate{}, string(gatewayv1.ListenerReasonInvalidCertificateRef), "Secret " + target + "/" + name + " has no base64 tls.crt and tls.key"
	}
	if _, err := tls.X509KeyPair(crt, key); err != nil {
		return certificate{}, string(gatewayv1.ListenerReasonInvalidCertificateRef), "Secret " + target + "/" + name + ": " + err.Error()
	}
	pem := string(crt)
	if pem[len(pem)-1] != '\n' {
		pem += "\n"
	}
	pem += string(key)
	if pem[len(pem)-1] != '\n' {
		pem += "\n"
	}
	return certificate{Name: target + "_" + name + ".pem", Namespace: target, Secret: name, PEM: pem}, "", ""
}

// allowsNamespace says whether routes in ns may attach to l of a Gateway
// in gwNS.
func (w *world) allowsNamespace(l *listener, gwNS, ns string) bool {
	switch l.nsFrom {
	case string(gatewayv1.NamespacesFromAll):
		return true
	case string(gatewayv1.NamespacesFromSelector):
		labs, ok := w.namespaces[ns]
		return ok && l.sel != nil && l.sel.Matches(labels.Set(labs))
	case string(gatewayv1.NamespacesFromSame):
		return ns == gwNS
	}
	return false
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// gatewayConditions computes the Gateway's Accepted condition: True while
// at least one listener is accepted.
func (g *gateway) accepted() condition {
	valid, invalid := 0, 0
	for _, l := range g.listeners {
		if l.acceptsRoutes {
			valid++
		} else {
			invalid++
		}
	}
	switch {
	case len(g.listeners) == 0:
		return cond(string(gatewayv1.GatewayConditionAccepted), true, string(gatewayv1.GatewayReasonAccepted), "gateway accepted")
	case valid == 0:
		return cond(string(gatewayv1.GatewayConditionAccepted), false, string(gatewayv1.GatewayReasonListenersNotValid), "no listener is valid")
	case invalid > 0:
		return cond(string(gatewayv1.GatewayConditionAccepted), true, string(gatewayv1.GatewayReasonListenersNotValid), "some listeners are not valid")
	}
	return cond(string(gatewayv1.GatewayConditionAccepted), true, string(gatewayv1.GatewayReasonAccepted), "gateway accepted")
}

// sortedKinds returns kinds in a stable order (HTTPRoute before GRPCRoute
// as the protocol lists them).
func sortedKinds(ks []string) []string {
	out := append([]string(nil), ks...)
	order := map[string]int{kindHTTP: 0, kindGRPC: 1, kindTLS: 2}
	sort.SliceStable(out, func(i, j int) bool { return order[out[i]] < order[out[j]] })
	return out
}
