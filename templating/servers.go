package templating

import (
	"cmp"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/haptic-io/haptic/renderplan"
	"github.com/haptic-io/haptic/store"
)

// labelServiceName links an EndpointSlice to its Service.
const labelServiceName = "kubernetes.io/service-name"

// backendServers resolves a Service's ready endpoints into server dicts
// {name, address, port, weight}: see the package documentation.
func (r *renderState) backendServers(d map[string]any) ([]any, error) {
	ref, err := parseServiceRef("backendServers", d)
	if err != nil {
		return nil, err
	}
	object := ref.object
	if object == "" {
		object = "Service " + ref.ns + "/" + ref.svc
	}
	servers, err := r.servicesServers(ref, object)
	if err != nil {
		return nil, fmt.Errorf("backendServers: %w", err)
	}
	out := make([]any, len(servers))
	var port any
	for i, s := range servers {
		if i == 0 || s.Port != servers[i-1].Port {
			port = s.Port
		}
		m := make(map[string]any, 4)
		m["name"], m["address"], m["port"], m["weight"] = s.Name, s.Address, port, s.Weight
		out[i] = m
	}
	return out, nil
}

// serviceRef is the dict backendServers and backend's "service" take.
type serviceRef struct {
	ns, svc, portName string
	portNum           int
	object            string
}

func parseServiceRef(fn string, d map[string]any) (serviceRef, error) {
	a := newDictArgs(fn, d, "namespace", "service", "port", "object")
	ref := serviceRef{
		ns:     a.str("namespace", false),
		svc:    a.str("service", true),
		object: a.str("object", false),
	}
	portArg, hasPort := d["port"]
	switch p := portArg.(type) {
	case nil:
		if hasPort {
			a.fail("port", "is nil")
		} else {
			a.fail("port", "is required")
		}
	case string:
		if n, err := strconv.Atoi(p); isDecimal(p) && err == nil {
			ref.portNum = n
		} else {
			ref.portName = p
		}
	default:
		n, ok := toInt(p)
		if !ok {
			a.fail("port", "must be a port name or number, not %T", p)
		}
		ref.portNum = n
	}
	return ref, a.err()
}

// servicesServers resolves a service reference once per render (the
// result is shared: callers must copy before changing it); the
// resolution's problems are reported on its first use in the render.
func (r *renderState) servicesServers(ref serviceRef, object string) ([]renderplan.Server, error) {
	if !r.e.watchesServices() {
		return nil, errServicesNotWatched
	}
	key := serversKey{ref.ns, ref.svc, ref.portName, ref.portNum, object}
	e := r.resolveEntry(key)
	r.useServers(key, e)
	return e.servers, nil
}

var errServicesNotWatched = errors.New("the config must watch services (v1) and endpointslices (discovery.k8s.io)")

// serversKey identifies one backendServers resolution within a render.
type serversKey struct {
	ns, svc, portName string
	portNum           int
	object            string
}

// resolveServers resolves a Service port's ready endpoints, given the
// Service (nil when missing) and its EndpointSlices, into servers sorted by
// name, and the problems found on the way. It reads nothing else.
func resolveServers(svc map[string]any, svcSlices []map[string]any, key serversKey) ([]renderplan.Server, []Problem) {
	ns, svcName, object := key.ns, key.svc, key.object
	var problems []Problem
	problem := func(reason, msg string) {
		problems = append(problems, Problem{Object: object, Reason: reason, Message: msg})
	}
	if svc == nil {
		problem(ReasonServiceNotFound, fmt.Sprintf("service %s/%s not found", ns, svcName))
		return nil, problems
	}
	spec, _ := svc["spec"].(map[string]any)
	if t, _ := spec["type"].(string); t == "ExternalName" {
		problem(ReasonServiceUnsupported, fmt.Sprintf("service %s/%s is of type ExternalName", ns, svcName))
		return nil, problems
	}
	// Find the Service port; its name is the EndpointSlice port's name.
	found := false
	var slicePortName string
	ports, _ := spec["ports"].([]any)
	for _, p := range ports {
		pm, _ := p.(map[string]any)
		name, _ := pm["name"].(string)
		num, _ := toInt(pm["port"])
		if (key.portName != "" && name == key.portName) || (key.portName == "" && num == key.portNum) {
			slicePortName, found = name, true
			break
		}
	}
	if !found {
		want := key.portName
		if want == "" {
			want = strconv.Itoa(key.portNum)
		}
		problem(ReasonServicePortNotFound, fmt.Sprintf("service %s/%s has no port %s", ns, svcName, want))
		return nil, problems
	}

	n := 0
	for _, slice := range svcSlices {
		eps, _ := slice["endpoints"].([]any)
		n += len(eps)
	}
	servers := make([]renderplan.Server, 0, n)
	var addrBuf [64]byte
	for _, slice := range svcSlices {
		if at, _ := slice["addressType"].(string); at == "FQDN" {
			continue
		}
		port := 0
		var raw any // the port as the slice has it
		sps, _ := slice["ports"].([]any)
		for _, p := range sps {
			pm, _ := p.(map[string]any)
			name, _ := pm["name"].(string)
			if name == slicePortName {
				raw = pm["port"]
				port, _ = toInt(raw)
				break
			}
		}
		if port < 1 || port > 65535 {
			// A port without a number (nil) is Kubernetes' "all ports":
			// nothing to route to, and no error.
			if raw != nil {
				_, sliceName, _ := store.ObjectMeta(slice)
				problem(ReasonEndpointInvalid, fmt.Sprintf("service %s/%s: EndpointSlice %s: port %v is not 1-65535; its endpoints are left out", ns, svcName, sliceName, raw))
			}
			continue
		}
		eps, _ := slice["endpoints"].([]any)
		for _, ep := range eps {
			em, _ := ep.(map[string]any)
			if cond, _ := em["conditions"].(map[string]any); cond != nil {
				if ready, ok := cond["ready"].(bool); ok && !ready {
					continue
				}
			}
			addrs, _ := em["addresses"].([]any)
			if len(addrs) == 0 {
				continue
			}
			addrStr, _ := addrs[0].(string)
			addr, err := netip.ParseAddr(addrStr)
			if err != nil || addr.Zone() != "" {
				problem(ReasonEndpointInvalid, fmt.Sprintf("service %s/%s: endpoint address %q is not an IP address", ns, svcName, addrStr))
				continue
			}
			name := ""
			if tr, _ := em["targetRef"].(map[string]any); tr != nil {
				name, _ = tr["name"].(string)
			}
			if name == "" {
				name = addressName(addr)
			}
			canonical := addrStr
			if b := addr.AppendTo(addrBuf[:0]); string(b) != addrStr {
				canonical = string(b)
			}
			servers = append(servers, renderplan.Server{
				Name:    SanitizeName(name),
				Address: canonical,
				Port:    port,
				Weight:  renderplan.DefaultWeight,
			})
		}
	}
	return dedupeServers(servers), problems
}

// slicesFor returns the EndpointSlices of one Service.
func (r *renderState) slicesFor(ns, svc string) []map[string]any {
	if r.e.sliceIndexed {
		return r.store.Fetch(r.e.sliceAlias, ns, svc)
	}
	if r.slicesBySvc == nil {
		r.slicesBySvc = map[string][]map[string]any{}
		for _, s := range r.store.List(r.e.sliceAlias) {
			if name := serviceOfSlice(s); name != "" {
				k := namespaceOf(s) + "\x00" + name
				r.slicesBySvc[k] = append(r.slicesBySvc[k], s)
			}
		}
	}
	return r.slicesBySvc[ns+"\x00"+svc]
}

// scanSlicesFor is slicesFor without the render's index: a linear scan,
// safe for concurrent use (renderEach items on an unindexed slice alias).
func scanSlicesFor(e *Engine, st Store, ns, svc string) []map[string]any {
	if e.sliceIndexed {
		return st.Fetch(e.sliceAlias, ns, svc)
	}
	var out []map[string]any
	for _, s := range st.List(e.sliceAlias) {
		if namespaceOf(s) == ns && serviceOfSlice(s) == svc {
			out = append(out, s)
		}
	}
	return out
}

func namespaceOf(obj map[string]any) string {
	ns, _, _ := store.ObjectMeta(obj)
	return ns
}

func serviceOfSlice(s map[string]any) string {
	md, _ := s["metadata"].(map[string]any)
	labels, _ := md["labels"].(map[string]any)
	name, _ := labels[labelServiceName].(string)
	return name
}

// addressName is the server name of an endpoint without a target
// reference: "ep-" and the address with '.' and ':' turned into '-'.
func addressName(a netip.Addr) string {
	return "ep-" + strings.NewReplacer(".", "-", ":", "-").Replace(a.String())
}

// dedupeServers sorts by name, then address and port, drops exact
// duplicates (one pod in two slices) and renames later servers that share
// a name but not the address (a dual-stack pod) to "<name>-<address>".
func dedupeServers(s []renderplan.Server) []renderplan.Server {
	slices.SortFunc(s, func(a, b renderplan.Server) int {
		return cmp.Or(cmp.Compare(a.Name, b.Name), cmp.Compare(a.Address, b.Address), cmp.Compare(a.Port, b.Port))
	})
	unique := true
	for i := 1; i < len(s) && unique; i++ {
		unique = s[i].Name != s[i-1].Name
	}
	if unique { // the common case: nothing to drop or rename
		return s
	}
	out := make([]renderplan.Server, 0, len(s))
	var used nameSet // only needed once a server was renamed
	for i, x := range s {
		if i > 0 && x.Name == s[i-1].Name && x.Address == s[i-1].Address && x.Port == s[i-1].Port {
			continue
		}
		if (i > 0 && x.Name == s[i-1].Name) || used[x.Name] {
			a, _ := netip.ParseAddr(x.Address)
			x.Name = SanitizeName(x.Name + "-" + strings.TrimPrefix(addressName(a), "ep-") + "-" + strconv.Itoa(x.Port))
			if used == nil {
				used = nameSet{}
				for _, o := range out {
					used[o.Name] = true
				}
			}
			if used[x.Name] {
				continue
			}
		}
		if used != nil {
			used[x.Name] = true
		}
		out = append(out, x)
	}
	slices.SortFunc(out, func(a, b renderplan.Server) int { return cmp.Compare(a.Name, b.Name) })
	return out
}

type nameSet map[string]bool

// isDecimal reports whether s could be a number for strconv.Atoi (an
// optional sign, then digits): names skip Atoi and its error allocation.
func isDecimal(s string) bool {
	if s != "" && (s[0] == '+' || s[0] == '-') {
		s = s[1:]
	}
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
