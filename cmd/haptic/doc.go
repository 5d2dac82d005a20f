// Command haptic is the HAPTIC binary. Each subcommand lives in its own
// file and is built by a constructor returning a *cli.Command; main.go
// lists them. Adding one is one file plus one line in newApp.
//
// # Subcommands
//
//	haptic agent       [--base-dir dir] [--listen addr | --pod-ip ip] [--token-file f] [--haproxy-binary path] …
//	haptic agent state [--url http://127.0.0.1:5555] [--token-file f]
//	haptic agent bootstrap --base-dir dir --stats-socket path [--bind addr …]
//	haptic local       -r resources/ [-c config.yaml] [--haproxy 3.4] [--listen addr] [--echo addrs] …
//	haptic render      -r resources/ -o out/ [-c config.yaml] [--libraries base,ingress]
//	haptic diff        --from a/ --to b/ [-c config.yaml] [--haproxy-version 3.4] [-o text|json] [--fail-on-reload]
//	haptic validate    [-c config.yaml] [--haproxy path] [--test name] [--dump-rendered] [--trace-templates]
//	haptic benchmark   [-c config.yaml] [--objects 100,1000,5000] [--iterations 5]
//	haptic benchmark propagation [--haproxy 3.4] [--routes 300] [--preload n] [--flips 20] …
//
// The haptic-agent binary (cmd/haptic-agent) is the agent command alone,
// which the HAProxy pods run; package internal/agentcmd holds the command
// both binaries share.
//
// agent serves the agent API and applies plans to one HAProxy (with
// --haproxy-binary it also starts and supervises it); agent state prints
// an agent's state; agent bootstrap writes the bootstrap haproxy.cfg
// unless the tree has one (the HAProxy pod's init container). local runs the controller loop, the agent behind its
// HTTP API and a supervised HAProxy on a directory of manifests. render
// writes the rendered tree and plan.json; diff renders two directories
// and prints the decision for a pod running the first; validate runs the
// validation tests of the libraries and the config; benchmark times
// renders of generated fixtures, and benchmark propagation times route
// adds and route changes end to end in local mode. The hidden benchmark
// probe-client and benchmark echo-servers are the child processes
// benchmark propagation starts.
//
// agent's API takes the bearer token on /v1/; /healthz, /readyz and
// /metrics answer without one, as probes and Prometheus expect, so the
// listen address is never every interface by default: --listen, else
// the pod IP (--pod-ip, or POD_IP as the chart sets it from the downward
// API) on port 5555, else 127.0.0.1:5555 with a warning. Its server bounds
// request headers (--read-header-timeout, 10s), each apply's manifest and
// bodies (--read-timeout, 10s, plus each body's size at --min-read-rate,
// 1024 KiB/s) and idle keep-alive connections (--idle-timeout, 2m).
//
// Most flags also read an environment variable (HAPTIC_CONFIG,
// HAPTIC_LIBRARIES, HAPTIC_RESOURCES, HAPTIC_OUTPUT, HAPTIC_HAPROXY, …).
// The stock libraries (--libraries, default "base,ingress", "none" for
// none) are merged before the operator's config, which goes last.
//
// # I/O and exit codes
//
// render, diff, validate and benchmark read and write files and return
// when done (validate runs haproxy -c; benchmark propagation starts
// HAProxy and child processes). agent and local serve until SIGINT or
// SIGTERM, then stop what they started. Errors go to stderr as
// "haptic: <err>"; the exit code is the cli.ExitCoder's (agent: 2 for bad
// flags; validate: 1 when a test failed; diff --fail-on-reload: 3 when the
// verdict is reload; benchmark propagation: 1 when an answer was
// unexpected), else 1.
package main
