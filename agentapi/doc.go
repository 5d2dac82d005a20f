// Package agentapi is the wire contract between HAPTIC's controller and the
// agent beside each HAProxy: the typed op vocabulary the planner emits and
// the agent executes.
//
// The types are pure data and do no I/O. Every type is a plain value, safe
// to copy and to read from several goroutines at once.
//
// # Ops
//
// An [Op] is one runtime operation on one object: a dynamic backend
// ([OpAddBackend], [OpPublishBackend], [OpUnpublishBackend],
// [OpDelBackend]), a server ([OpAddServer], [OpSetServerAddr],
// [OpSetServerWeight], [OpSetServerState], [OpEnableHealth],
// [OpDelServer]), a map ([OpAddMapEntry], [OpSetMapEntry],
// [OpDelMapEntry], [OpReplaceMap]) or a certificate ([OpNewCert],
// [OpSetCert], [OpCommitCert], [OpAddCrtListEntry], [OpDelCrtListEntry]).
// An op never carries a raw command line: the agent builds the commands
// with the haproxysock builders, the one place where arguments are escaped.
//
// The [OpKind] constants are ordered: their order is the safe apply order,
// grouped into phases ([OpKind.Phase]). Ops encode to JSON with the kind's
// wire name ("server.add") and decode strictly ([Op.UnmarshalJSON],
// [DecodeOps]): an unknown field or kind, a field the kind does not use or
// a value HAProxy would not take is an error, wrapping [ErrInvalidOp] or
// [ErrUnknownOpKind].
package agentapi
