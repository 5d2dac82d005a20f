// Package agentcmd is the agent's command line, shared by two binaries:
// the haptic binary runs it as `haptic agent`, and the haptic-agent
// binary is nothing else ([App]: the same flags and subcommands at its
// root).
//
// The agent runs beside every HAProxy, so its footprint counts once per
// pod. haptic-agent links only the agent runtime, the agent API and
// HAProxy's sockets, none of the Kubernetes client, the templating engine
// or the controller, which the haptic binary carries and initialises at
// start (their package initialisation alone maps tens of MiB of the
// haptic binary into every process that runs it).
//
// # Subcommands
//
//	haptic-agent           [--base-dir dir] [--listen addr | --pod-ip ip] [--token-file f] [--haproxy-binary path] …
//	haptic-agent state     [--url http://127.0.0.1:5555] [--token-file f]
//	haptic-agent bootstrap --base-dir dir --stats-socket path [--bind addr …]
//
// The same run as `haptic agent …`, `haptic agent state …` and `haptic
// agent bootstrap …`. Errors go to stderr; the exit code is 2 for bad
// flags, else 1.
package agentcmd
