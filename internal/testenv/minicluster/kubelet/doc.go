// Package kubelet is a process kubelet for the test-only mini cluster
// ([github.com/haptic-io/haptic/internal/testenv/minicluster]). It registers
// one Node, renews its Lease every 10 s, binds pending pods to it (acting as
// the scheduler) and runs each pod's containers as local processes in a
// network namespace of the pod's own, joined to the node's namespace by a
// veth pair. Pod IPs come from 198.18.0.0/15, because the apiserver rejects
// loopback addresses in EndpointSlices.
//
// # What a pod gets
//
//   - Images map to local binaries by prefix ([Image]); the binary is the
//     entrypoint, container args are passed to it and container command is
//     ignored. [ConformanceImages] maps the Gateway API conformance
//     backends, [HAPTICImages] HAPTIC's own pods (HAProxy and haptic).
//   - Init containers run one at a time, in order, each to a zero exit,
//     before the containers start; the pod is Pending (Initialized False)
//     meanwhile. One that fails is restarted after a second, unless the
//     pod's restartPolicy is Never, which fails the pod. They run again
//     only when the pod is started anew (a start that failed).
//   - Env: literals with $(VAR) expansion, fieldRefs (metadata.name,
//     metadata.namespace, metadata.uid, metadata.labels/annotations['k'],
//     spec.nodeName, spec.serviceAccountName, status.podIP, status.hostIP),
//     secretKeyRef and configMapKeyRef.
//   - Volumes: secret, configMap (honouring items and modes) and emptyDir are
//     materialised under the pod's directory. Processes share the host's
//     mount table, so instead of bind mounts each env value and arg that
//     starts with a mountPath is rewritten to the materialised directory
//     (documented fallback). Projected volumes (service-account tokens) are
//     skipped. Paths inside files (a config naming /etc/x) are not
//     rewritten: give them relative to the working directory.
//   - Working directory: workingDir, rewritten like an arg, so it must lie
//     inside a volume mount; without one, the pod's directory.
//   - Readiness: the readinessProbe's httpGet (a status in [200, 400)) or
//     tcpSocket, against the pod IP; without a probe, a TCP connect to
//     every declared container port, or to Image.ReadyPorts when the
//     container declares none. exec and grpc probes are refused. The check
//     runs on every sync until it passes once (probe timings are not
//     honoured), and a ready container stays ready until it exits.
//   - Network: the pod's own namespace, joined to the node's by a veth
//     pair; the node's namespace forwards IPv4, so pods reach each other's
//     IPs.
//   - Logs: stdout and stderr, timestamped per line, served over HTTPS at
//     /containerLogs/{namespace}/{pod}/{container} on Config.LogsAddr for
//     `kubectl logs` (sinceTime, sinceSeconds, tailLines, timestamps),
//     init containers' included.
//   - Deletion: as the real kubelet does, each container runs its preStop
//     hook (the "sleep" action; exec and httpGet hooks are skipped with a
//     warning), then gets SIGTERM, and SIGKILL when the grace period
//     (deletionGracePeriodSeconds) is over, at least 2 s after the SIGTERM.
//     The pod's status is left alone meanwhile, so its endpoints stay
//     serving and terminating. Once every process exited, the namespace is
//     removed and the pod deleted with grace period 0.
//
// # I/O and concurrency
//
// Everything here does I/O: the apiserver, processes, files, sysctls and
// iproute2 (`ip`) commands, so it needs root inside a private network
// namespace (see minicluster.Main).
// [Kubelet.Run] is the only long-lived loop; it polls pods every
// Config.Interval and waits for its goroutines before returning.
package kubelet
