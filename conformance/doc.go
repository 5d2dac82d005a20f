// Package conformance runs the official Gateway API conformance suite
// (sigs.k8s.io/gateway-api/conformance v1.6.3, the conformance.test binary
// that hack/build-minicluster.sh builds) against HAPTIC installed in the
// mini cluster of internal/testenv/minicluster, and holds the reports
// of those runs under reports/.
//
// The package has no code of its own: its test, TestGatewayAPIConformance,
// starts the cluster (etcd, kube-apiserver, kube-controller-manager and
// the process kubelet, in a private network namespace), installs the
// Gateway API CRDs of the experimental channel and HAPTIC's CRDs, creates
// an HAProxyTemplateConfig with the gateway library and the GatewayClass
// "haptic", starts `haptic controller` as a process with a kubeconfig, and
// runs conformance.test unmodified in the same network namespace. The
// controller provisions one HAProxy fleet per Gateway; the suite dials
// each Gateway's status.addresses (its fleet pods' IPs).
//
// HAPTIC_CONFORMANCE selects the run: "core" (the default, part of make
// test) runs the GATEWAY-HTTP core tests (the features Gateway, HTTPRoute
// and ReferenceGrant); "full" (make conformance) runs the profiles
// GATEWAY-HTTP, GATEWAY-GRPC and GATEWAY-TLS with the features the
// GatewayClass declares and writes the report; see reports/README.md.
package conformance
