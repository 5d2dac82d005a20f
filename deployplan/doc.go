// Package deployplan decides how a new plan reaches one HAProxy pod. It
// does no I/O: [Diff] is a pure, deterministic function of the next
// [renderplan.Plan] and the pod's [Baseline] (the plan it runs, its
// HAProxy version, the agent's op kinds and its pending deletes). Every
// type is a plain value, safe to read from several goroutines; Diff may
// run concurrently for many pods.
//
// # Verdicts
//
// A [Decision] carries a [Verdict], the ordered runtime ops, the full file
// set to write and human-readable [Reason] values. The rules, first match
// wins:
//
//  1. Unknown baseline, a foreign plan schema, an unsupported HAProxy
//     version or an agent that does not say which ops it runs: reload with
//     the full state.
//  2. Core or profile text changed, a structural backend added, removed or
//     changed, a backend's profile, mode or guid changed, a reloadOnChange
//     file or a crt-list changed, a map file added or removed, a dynamic
//     backend added or removed below HAProxy 3.4, a server change HAProxy
//     cannot apply at runtime (keywords, host names, static balancing), an
//     op the agent lacks, or more runtime work than a reload costs: reload.
//  3. Server, map-entry, certificate and (3.4) dynamic-backend changes:
//     runtime, with ops.
//  4. Files changed that the running process need not learn: file_only.
//  5. Nothing changed: noop.
//
// The files are written whatever the verdict, so the next reload
// reproduces what the runtime ops did.
//
// # Op order
//
// Ops are sorted by [runtimeop.OpKind.Phase], then by target, keeping the
// emitted order of one target's ops: add backends, add and update servers,
// publish, map upserts, certificates, map deletes, unpublish, server
// deletes, backend deletes. A server is never re-addressed while serving
// (maint, addr, then ready). New servers start in maint, then get ready and
// enable health when they have checks.
//
// # Cost
//
// Diff walks the sorted lists of both plans (backends, servers, maps,
// map entries, files) in step, checking their order on the way, and
// allocates in proportion to the change, not to the plans. Lists shared
// by the two plans, as [renderplan.Cache] shares unchanged backends'
// servers and maps' entries, are compared by identity.
//
// # Certificates
//
// A certificate file whose digest changed becomes [runtimeop.OpSetCert] (the
// agent reads the PEM from the file of the same apply, named by path and
// digest) and [runtimeop.OpCommitCert]. Plans carry no crt-list entries, so
// a crt-list change reloads, and a new certificate file is file_only until
// a crt-list or the configuration names it.
package deployplan
