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
//     ignored. An Image may name a stop signal (its STOPSIGNAL) and
//     directories for the front of PATH (programs the image carries).
//     [ConformanceImages] maps the Gateway API conformance backends,
//     [HAPTICImages] HAPTIC's own pods (HAProxy, stopped with SIGUSR1 as
//     its image is, and haptic, with haproxy on its PATH).
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
//     materialised under the pod's directory; an emptyDir of medium Memory
//     is a tmpfs mounted there (sizeLimit its size), unmounted when the
//     pod stops. Processes share the host's mount table, so instead of
//     bind mounts each env value and arg that starts with a mountPath is
//     rewritten to the materialised directory (documented fallback). Projected volumes are skipped unless the
//     pods run in-cluster (below). Paths inside files (a config naming
//     /etc/x) are not rewritten: give them relative to the working
//     directory.
//   - In-cluster (Config.APIServer set): every container gets
//     KUBERNETES_SERVICE_HOST and _PORT, the ClusterIP and port of
//     Service default/kubernetes; projected volumes are materialised (a
//     serviceAccountToken by a TokenRequest bound to the pod, configMap,
//     secret and downwardAPI fieldRef sources) and, when mounted under
//     /run or /var/run, mounted for real: the container starts on a tmpfs
//     of its own over /run, in the mount namespace `ip netns exec` gives
//     it, with the volume bound at its mountPath, so client-go's
//     in-cluster config finds /var/run/secrets/kubernetes.io/serviceaccount.
//     A user-space service proxy listens on every Service's ClusterIP
//     (added to the node's lo) and port and splices each connection to a
//     ready endpoint picked at random (a serving, terminating one when
//     none is ready); default/kubernetes goes to Config.APIServer. Pods
//     and the test reach ClusterIPs alike. The token is not refreshed.
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
//     warning), then gets its image's stop signal (SIGTERM unless the
//     Image names another), and SIGKILL when the grace period
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
