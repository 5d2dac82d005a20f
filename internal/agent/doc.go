// Package agent is the runtime of HAPTIC's per-pod agent: it owns the
// HAProxy file tree under a base directory (haproxy.cfg, maps/, certs/,
// general/), both HAProxy sockets, a journal and a last-known-good set,
// and implements [agentapi.Applier] on top of them ([Agent]). The mapping
// from typed ops to runtime commands ([Commands], [RunOp]) is the one
// place where an op becomes command lines.
//
// It does I/O: files under BaseDir and StateDir, HAProxy's unix sockets,
// and (with [Supervisor]) a child HAProxy process. [Commands] is pure.
//
// # The apply transaction
//
// [Agent.Apply] runs one transaction at a time: fence (expected previous
// plan, fencing token not older than the newest accepted) → check the
// files against the tree (digests compared, patches' results included;
// map and crt-list lines bounded by renderplan.MaxLine of Config.BufSize,
// since HAProxy would read a longer one cut in two; nothing is written)
// → stage the changed bodies under BaseDir/.haptic-txn (same
// filesystem), hard-link the old files aside and write the journal, then
// make all of it durable in one pass → swap by renames, haproxy.cfg last
// → reload through the master socket when the mode or verdict asks, or as
// the fallback after a refused op (the files are already the new set, so
// the reload makes it live; a fallback reload is not paced) → verify
// (Success=1, no failed reload counted, a new serving PID in "show proc")
// → commit: the tree directories the swap renamed into are synced with
// the new state, then state.json (the commit point) naming the plan and
// its manifest and, when this apply reloaded and verified, a new
// last-known-good set (hard links in StateDir): only a set HAProxy parsed
// is last-known-good, so revert_lkg never lands on a set that reached
// HAProxy through runtime ops alone. Any failure restores the journal;
// when ops or a reload already reached HAProxy, the agent also reloads
// onto the restored files so the runtime state matches them. The NACK
// carries the stage and HAProxy's text ([ALERT] lines for a refused
// reload).
//
// An apply that serves through runtime ops alone runs them on one worker
// socket session right after the check, before it stages anything (ops
// share a batch only where a refusal among them cannot hurt traffic, see
// opBatches; a refusal stops the apply after its batch): the files are what the next
// reload loads, not what HAProxy serves now, so writing them is kept off
// the path of the change. It first writes an ops mark in StateDir (kept
// open and rewritten in place, blank when cleared; not synced: a killed
// agent leaves it in the page cache, and a power loss ends HAProxy's
// runtime state too); a crash before the commit leaves the mark, and
// recovery answers it with a reload onto the committed tree.
// Files that then fail to stage are answered the same way, at once.
//
// What such an apply does before its ops is kept to the change: the tree
// is hashed through a cache of file stamps (size, modification time,
// inode) that each commit primes with the files it staged, so only files
// changed by someone else are read back; bodies the handler already
// hashed are not hashed again ([agentapi.BodiesChecked]); a file may come
// as an [agentapi.Patch] of the one on disk, whose result is checked
// against the manifest's digest by hashing its parts in place (the base
// is the body the agent kept when it wrote that file, read from disk only
// when it has none) and made into a body only when staged, after the
// ops; and the socket session is dialled in the background during the
// check.
//
// # Crash recovery
//
// [New] finishes or rolls back an interrupted apply: a journal whose
// transaction state.json already names is cleaned up (roll forward);
// any other is rolled back to the old files. That, or an ops mark of a
// plan state.json does not name, owes a reload onto the committed tree,
// which runs first thing in [Agent.Run] (or before the next apply).
// Killing the agent at any step leaves the tree exactly the old or the new
// set (tested with SIGKILL at every step).
//
// # Pacing, deferred deletes, drift, leaving workers
//
// A reload asked for within MinReloadInterval of the last one is
// scheduled, never dropped: files land and runtime ops run meanwhile, the
// result says Scheduled, and Run reloads onto the latest files when the
// window opens, reporting the outcome in the state's last apply. The
// first plan is never scheduled: until it loads, HAProxy serves the
// bootstrap config's 503.
// Server and backend deletes are tried inline without "wait" (HAProxy
// answers an unsatisfied wait only after ~100 ms); a busy object is queued
// (bounded) and Run retries "wait … removable" + delete on the worker
// socket; a reload empties the queue. Run re-hashes the tree every
// DriftInterval; a mismatch makes the state report Drifted and no applied
// plan, so the controller sends the full state and a reload.
//
// Runtime ops reach the serving worker only. A worker leaving after a
// reload keeps the servers it had: HAProxy refuses server changes routed
// to it ("@!<pid> set server …" answers "Proxy is disabled." on 3.0, 3.2
// and 3.4), so the agent sends it nothing. What keeps its requests off a
// removed endpoint is that the endpoint keeps serving while it leaves
// (see docs/architecture.md, "Rolling restarts").
//
// # Concurrency
//
// An [Agent] is safe for concurrent use; applies, scheduled reloads and
// drift checks are serialised on one lock. Run's goroutines are waited
// for before it returns. A [Supervisor] is safe for concurrent use.
package agent
