package runtimeop

import "fmt"

// OpKind names what an [Op] does.
//
// The order of the constants matters: it is the safe apply order. A
// decision's ops run phase by phase ([OpKind.Phase]): new backends, then
// their servers and server changes, then publishing, map upserts,
// certificates, map deletes, unpublishing, server deletes and backend
// deletes last. So a request routed by a new map entry always finds a
// published backend with ready servers, and nothing is deleted while a map
// entry still points at it. Within a phase the ops of one object (one
// server, one map entry, one certificate) stay together, in the order the
// planner emitted them. Do not reorder the constants; add new kinds in the
// phase where they belong.
type OpKind int

// Op kinds, in the safe apply order.
const (
	opInvalid OpKind = iota

	// OpAddBackend creates a dynamic backend, unpublished, from a profile:
	// "add backend <b> from <profile> mode <m> guid <g>" (HAProxy 3.4+).
	OpAddBackend

	// OpAddServer creates a server in a backend: "add server <b>/<s>
	// <addr>:<port> weight <w> [check] [keywords…]". HAProxy creates it in
	// maintenance; an [OpSetServerState] ready follows.
	OpAddServer
	// OpSetServerState sets a server's administrative state (ready, drain
	// or maint).
	OpSetServerState
	// OpSetServerAddr changes a server's address and port. The planner
	// never sends it to a serving server: it puts the server in maint
	// first and back to ready after.
	OpSetServerAddr
	// OpSetServerWeight sets a server's weight.
	OpSetServerWeight
	// OpEnableHealth starts the health checks of a server added at
	// runtime ("enable health <b>/<s>").
	OpEnableHealth

	// OpPublishBackend makes a backend reachable ("publish backend <b>").
	OpPublishBackend

	// OpAddMapEntry adds a key that the map does not hold ("add map").
	OpAddMapEntry
	// OpSetMapEntry changes the value of a key the map holds ("set map").
	OpSetMapEntry
	// OpReplaceMap replaces every entry of a map atomically: "prepare
	// map", "add map @<v>" per entry, "commit map @<v>".
	OpReplaceMap

	// OpNewCert creates an empty certificate store ("new ssl cert").
	OpNewCert
	// OpSetCert loads a certificate into a transaction ("set ssl cert");
	// the PEM is the body of the file at the op's Cert path in the same
	// apply, whose digest the op names.
	OpSetCert
	// OpCommitCert commits the certificate transaction ("commit ssl cert").
	OpCommitCert
	// OpAddCrtListEntry adds a certificate to a crt-list ("add ssl
	// crt-list").
	OpAddCrtListEntry
	// OpDelCrtListEntry removes a certificate from a crt-list ("del ssl
	// crt-list").
	OpDelCrtListEntry

	// OpDelMapEntry removes a key from a map ("del map").
	OpDelMapEntry

	// OpUnpublishBackend stops routing to a backend ("unpublish backend").
	OpUnpublishBackend

	// OpDelServer takes a server out of service and deletes it once it
	// is removable: "set server <b>/<s> state maint", "wait <ms>
	// srv-removable <b>/<s>", "del server <b>/<s>". The agent defers the
	// delete while connections remain.
	OpDelServer

	// OpDelBackend deletes an unpublished backend without servers ("del
	// backend <b>", after "wait <ms> be-removable <b>").
	OpDelBackend

	opEnd
)

// Phase is the position of an op kind's group in the safe apply order.
type Phase int

// Phases, in apply order.
const (
	PhaseAddBackends Phase = iota
	PhaseServers
	PhasePublish
	PhaseMapUpserts
	PhaseCerts
	PhaseMapDeletes
	PhaseUnpublish
	PhaseDelServers
	PhaseDelBackends
)

var opKindInfo = [opEnd]struct {
	name  string
	phase Phase
}{
	OpAddBackend:       {"backend.add", PhaseAddBackends},
	OpAddServer:        {"server.add", PhaseServers},
	OpSetServerState:   {"server.set_state", PhaseServers},
	OpSetServerAddr:    {"server.set_addr", PhaseServers},
	OpSetServerWeight:  {"server.set_weight", PhaseServers},
	OpEnableHealth:     {"server.enable_health", PhaseServers},
	OpPublishBackend:   {"backend.publish", PhasePublish},
	OpAddMapEntry:      {"map.add", PhaseMapUpserts},
	OpSetMapEntry:      {"map.set", PhaseMapUpserts},
	OpReplaceMap:       {"map.replace", PhaseMapUpserts},
	OpNewCert:          {"cert.new", PhaseCerts},
	OpSetCert:          {"cert.set", PhaseCerts},
	OpCommitCert:       {"cert.commit", PhaseCerts},
	OpAddCrtListEntry:  {"crtlist.add", PhaseCerts},
	OpDelCrtListEntry:  {"crtlist.del", PhaseCerts},
	OpDelMapEntry:      {"map.del", PhaseMapDeletes},
	OpUnpublishBackend: {"backend.unpublish", PhaseUnpublish},
	OpDelServer:        {"server.del", PhaseDelServers},
	OpDelBackend:       {"backend.del", PhaseDelBackends},
}

// OpKinds returns every op kind, in the safe apply order. An agent that
// implements the whole vocabulary advertises this list.
func OpKinds() []OpKind {
	out := make([]OpKind, 0, opEnd-1)
	for k := opInvalid + 1; k < opEnd; k++ {
		out = append(out, k)
	}
	return out
}

// Valid reports whether k is one of the defined kinds.
func (k OpKind) Valid() bool { return k > opInvalid && k < opEnd }

// String returns the kind's wire name, such as "server.add".
func (k OpKind) String() string {
	if !k.Valid() {
		return fmt.Sprintf("OpKind(%d)", int(k))
	}
	return opKindInfo[k].name
}

// Phase returns the apply phase of k. Phases never decrease along the
// kinds' order.
func (k OpKind) Phase() Phase {
	if !k.Valid() {
		return -1
	}
	return opKindInfo[k].phase
}

// ParseOpKind returns the kind with the given wire name.
func ParseOpKind(s string) (OpKind, error) {
	for k := opInvalid + 1; k < opEnd; k++ {
		if opKindInfo[k].name == s {
			return k, nil
		}
	}
	return opInvalid, fmt.Errorf("%w: %q", ErrUnknownOpKind, s)
}

// MarshalText encodes k as its wire name.
func (k OpKind) MarshalText() ([]byte, error) {
	if !k.Valid() {
		return nil, fmt.Errorf("%w: %d", ErrUnknownOpKind, int(k))
	}
	return []byte(opKindInfo[k].name), nil
}

// UnmarshalText decodes a wire name; an unknown name is an error.
func (k *OpKind) UnmarshalText(b []byte) error {
	v, err := ParseOpKind(string(b))
	if err != nil {
		return err
	}
	*k = v
	return nil
}
