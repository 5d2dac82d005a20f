package templating

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Problem is bad user input found during a render: the render goes on
// without the offending piece (a backend, a server, a map entry, a file,
// or a whole object whose renderEach item failed) and reports it.
// Problems are sorted and unique in a render's result.
type Problem struct {
	// Object names what the problem is about: the object a template passed
	// ("Ingress default/web") or, without one, the API element
	// ("backend be_x", "map hosts.map").
	Object string `json:"object"`
	// Ref identifies the watched object Object names ("Kind
	// namespace/name", or "Kind name" for a cluster-scoped object) when
	// the render's store holds it; it is zero otherwise. It is what an
	// Event about the problem is published on.
	Ref ObjectRef `json:"ref,omitzero"`
	// Reason is a machine-readable CamelCase reason.
	Reason string `json:"reason"`
	// Message is for people.
	Message string `json:"message"`
}

func (p Problem) String() string {
	return fmt.Sprintf("%s: %s: %s", p.Object, p.Reason, p.Message)
}

// ObjectRef identifies a Kubernetes object.
type ObjectRef struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	// Namespace is empty for a cluster-scoped object (or one that lacks
	// it).
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
}

// String is how problems name the object: "Kind namespace/name", or
// "Kind name" without a namespace.
func (o ObjectRef) String() string {
	if o.Namespace == "" {
		return o.Kind + " " + o.Name
	}
	return o.Kind + " " + o.Namespace + "/" + o.Name
}

// objectRefOf returns the identity of obj, and false when obj lacks a
// kind or a name.
func objectRefOf(obj map[string]any) (ObjectRef, bool) {
	var ref ObjectRef
	ref.APIVersion, _ = obj["apiVersion"].(string)
	ref.Kind, _ = obj["kind"].(string)
	if md, ok := obj["metadata"].(map[string]any); ok {
		ref.Namespace, _ = md["namespace"].(string)
		ref.Name, _ = md["name"].(string)
	}
	return ref, ref.Kind != "" && ref.Name != ""
}

// Problem reasons reported by the author API. Templates may report their
// own reasons with the problem function.
const (
	ReasonBackendInvalid      = "BackendInvalid"
	ReasonServerInvalid       = "ServerInvalid"
	ReasonServiceNotFound     = "ServiceNotFound"
	ReasonServicePortNotFound = "ServicePortNotFound"
	ReasonServiceUnsupported  = "ServiceUnsupported"
	ReasonEndpointInvalid     = "EndpointInvalid"
	ReasonMapEntryInvalid     = "MapEntryInvalid"
	ReasonMapKeyConflict      = "MapKeyConflict"
	ReasonCertificateInvalid  = "CertificateInvalid"
	// ReasonRenderFailed: the templates failed on one renderEach item (a
	// field of the wrong type, a missing key); the item's output and
	// effects are left out and the message is the template error.
	ReasonRenderFailed = "RenderFailed"
	// ReasonValueTooLong: a value would make a map or crt-list line, or a
	// file path, longer than HAProxy reads as one (renderplan's Bounds).
	ReasonValueTooLong = "ValueTooLong"
)

func sortProblems(ps []Problem) []Problem {
	slices.SortFunc(ps, func(a, b Problem) int {
		return cmp.Or(cmp.Compare(a.Object, b.Object), cmp.Compare(a.Reason, b.Reason), cmp.Compare(a.Message, b.Message))
	})
	return slices.Compact(ps)
}

// resolveRefs sets the Ref of the sorted problems ps whose Object names
// an object of the store ("Kind namespace/name" or "Kind name" of an
// object of that kind under one of the watched aliases, the first alias
// in name order when several hold it).
func (r *renderState) resolveRefs(ps []Problem) {
	var aliases []string
	for i := range ps {
		p := &ps[i]
		if p.Ref != (ObjectRef{}) {
			continue
		}
		if i > 0 && ps[i-1].Object == p.Object {
			p.Ref = ps[i-1].Ref // sorted: the same object's problems are adjacent
			continue
		}
		kind, rest, ok := strings.Cut(p.Object, " ")
		if !ok || kind == "" || rest == "" || strings.ContainsRune(rest, ' ') {
			continue
		}
		ns, name, found := strings.Cut(rest, "/")
		if !found {
			ns, name = "", rest
		}
		if aliases == nil {
			aliases = sortedKeys(r.e.resources)
		}
		for _, alias := range aliases {
			if obj, ok := r.store.Get(alias, ns, name); ok && obj["kind"] == kind {
				p.Ref, _ = objectRefOf(obj)
				break
			}
		}
	}
}
