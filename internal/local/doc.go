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
