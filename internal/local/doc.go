// Package local runs HAPTIC's main job without Kubernetes: one HAProxy
// (supervised as a child process), the agent in process behind the same
// HTTP contract it serves in a pod (agentapi.NewHandler on a loopback port,
// driven by an agentapi.Client with a random bearer token), and the
// controller loop fed by a directory of manifests ([controller.DirSource]).
// It is what `haptic local` and `make demo` run.
//
// [Run] also watches the template config file: a change recompiles it; a
// config that does not load or compile is reported and the last good one
// stays in use. Optional echo servers ([Config.Echo]) give a demo
// something to route to.
//
// # Restarts
//
// A work dir ([Config.WorkDir]) belongs to one run at a time: the agent
// locks its tree, and a second run on it fails with an error naming the
// process that holds it. A run on a work dir an earlier run left, after a
// Ctrl-C or a kill -9, starts HAProxy on the tree that run committed, so
// the routes serve from the first moment and the first render, if it
// differs at all, is an ordinary apply. When there is no committed tree,
// or HAProxy does not start on it (a port the new run does not listen on
// is taken), HAProxy starts on the bootstrap configuration (503 for
// everything) and the agent reports the tree as it is on disk, so the
// first apply carries the full state and a reload.
//
// HAProxy does not outlive the process that supervises it: on Linux the
// kernel stops its master when local mode dies, however it dies (see
// agent.Supervisor), and a start that finds a master still answering on
// the work dir's master socket stops that one first. A deep work dir
// keeps its sockets in a directory under the system's temporary
// directory named after the work dir's path, the same on every run.
//
// `haptic benchmark propagation` (package internal/propagation) runs
// local mode through [Run] and times route changes against it.
//
// # I/O and concurrency
//
// Run does I/O of every kind: it writes a work directory, starts haproxy,
// listens on loopback TCP ports and unix sockets. It blocks until ctx
// ends, then stops everything it started (HAProxy and its workers
// included) before it returns. Everything listens on the addresses the
// Config names; the defaults are loopback.
package local
