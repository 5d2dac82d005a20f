// Package agentapi is the wire contract between HAPTIC's controller and the
// agent beside each HAProxy: the typed op vocabulary the planner emits and
// the agent executes.
//
// The types and [DecodeManifest], [ValidatePath] and [ApplyRequest.Validate]
// are pure and do no I/O. [Client] and the handler of [NewHandler] do
// network I/O; [ReadTokenFile] reads a file. Types are plain values, safe
// to copy and to read from several goroutines; a Client and a handler are
// safe for concurrent use.
//
// # Ops
//
// An [Op] is one runtime operation on one object (a dynamic backend, a
// server, a map or a certificate), of an [OpKind] whose order is the safe
// apply order. The op vocabulary, with the [Verdict] and [PendingDelete],
// is declared in package [github.com/haptic-io/haptic/agentapi/runtimeop],
// which does no I/O; the names here are aliases of its types and copies of
// its constants, so that users of the contract need this package only.
// Ops decode strictly ([Op.UnmarshalJSON], [DecodeOps]): an unknown field
// or kind, a field the kind does not use or a value HAProxy would not take
// is an error, wrapping [ErrInvalidOp] or [ErrUnknownOpKind].
//
// # The agent contract
//
// An [Applier] serves the contract: [Applier.State] reports a [State]
// (versions, supported op kinds, worker identity, applied and
// last-known-good plan IDs, fencing token, file digests, pending deletes,
// drift) and [Applier.Apply] runs one [ApplyRequest] (plan ID, expected
// previous plan, fencing token, [Mode], [Verdict], every file of the new
// tree, ops, and the bodies of the files that changed) to an
// [ApplyResult]. The agent runtime implements it; [NewHandler] serves one
// over HTTP (GET /v1/state, POST /v1/apply, /healthz, /readyz, /metrics)
// and [Client] is one that talks to a remote agent, so the dispatcher
// takes either.
//
// # Wire format
//
// POST /v1/apply carries the manifest (the JSON of [ApplyRequest]) and the
// bodies. The Client frames them as [ContentTypeApply]: the manifest's
// length and a newline, the manifest, then each body as its path, a
// newline and exactly the size the manifest gives it, so the handler reads
// every body straight into a buffer of its size. The handler also takes
// multipart/form-data (a [ManifestPart] part, then one part per body named
// by its path), the format of earlier agents; a Client whose framed apply
// is answered 415 sends multipart from then on. Both formats decode to
// the same request and pass the same checks. The handler hashes every
// body against the manifest before it calls the Applier and says so in
// the context it passes ([BodiesChecked]), so that the agent need not
// hash the bodies a second time.
//
// A changed file may travel as a [Patch] of the file the agent has
// ([ApplyRequest.Patches], framed format only, to agents whose
// [State.BodyPatches] is set): the bytes it keeps of the start and the
// end of that file, named by its digest, and what goes between. A route
// add on a tree of thousands of backends then sends a few hundred bytes
// instead of the whole haproxy.cfg and maps. The handler checks a patch's
// shape; the agent rebuilds the body, checks it against the manifest's
// digest before writing anything, and refuses the apply at [StageFiles]
// when its file is not the patch's base.
//
// # Errors
//
// A refused apply is a *[NackError] carrying the [Stage] that failed, the
// op at fault and HAProxy's message verbatim. The handler encodes it and
// the Client decodes it into the same type, so callers use errors.As the
// same way in process and over HTTP. A request this agent does not
// understand (an unknown field, op kind, mode, verdict or file kind) is a
// NackError at [StageDecode] with Unsupported set and matches
// [ErrUnsupported]: the controller answers it with the full state and a
// reload. Other HTTP failures are a *[StatusError]; a 401 matches
// [ErrUnauthorized].
//
// # Security
//
// Every /v1/ request carries a bearer [Token] (read with [ReadTokenFile],
// compared in constant time; a Token never prints itself); /healthz,
// /readyz and /metrics do not. The handler bounds the request ([Limits]),
// and each body by the size its manifest declares before a byte of it is
// read, reads bodies into buffers that end at that size, moves a read
// deadline ahead of every part ([HandlerOptions].ReadTimeout and
// MinReadRate), decodes the manifest strictly (a key an object names
// twice, in any case, is refused), and refuses unclean, absolute,
// traversing or duplicate paths, files out of their kind's place
// ([ValidatePlace]), invalid ops and bodies whose digest differs from the
// manifest before the Applier is called. TLS, the header and idle
// timeouts and the listen address are the http.Server's, set by the
// binary.
package agentapi
