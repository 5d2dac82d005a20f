package templating

import (
	"cmp"
	"fmt"
	"slices"
)

// Problem is bad user input found during a render: the render goes on
// without the offending piece (a backend, a server, a map entry, a file)
// and reports it. Problems are sorted and unique in a render's result.
type Problem struct {
	// Object names what the problem is about: the object a template passed
	// ("Ingress default/web") or, without one, the API element
	// ("backend be_x", "map hosts.map").
	Object string `json:"object"`
	// Reason is a machine-readable CamelCase reason.
	Reason string `json:"reason"`
	// Message is for people.
	Message string `json:"message"`
}

func (p Problem) String() string {
	return fmt.Sprintf("%s: %s: %s", p.Object, p.Reason, p.Message)
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
