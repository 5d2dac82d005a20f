// Package runtimeop is the vocabulary the planner and the agent share:
// the typed runtime [Op] and its [OpKind], the [Verdict] of how a plan
// reaches a pod and the [PendingDelete] an agent reports. It does no I/O
// and imports neither net/http nor the agent's client, so that a planner
// such as deployplan can be embedded without them. Its types are plain
// values, safe to copy and to read from several goroutines. Package
// agentapi re-exports every name, so callers of the agent contract need
// not import this package.
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
// [ErrUnknownOpKind]. [Op.Validate] runs the same checks on an op built in
// Go.
package runtimeop
