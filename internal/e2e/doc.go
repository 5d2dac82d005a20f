// Package e2e holds HAPTIC's end-to-end tests: the test-only mini cluster
// ([github.com/haptic-io/haptic/internal/testenv/minicluster]) with its
// process kubelet runs HAPTIC's own pods (HAProxy 3.4 and the haptic
// binary built from this module) from the manifests under testdata/, and
// the tests drive them over their real interfaces: the apiserver, the
// agents' HTTP API and HTTP through the pods' IPs.
//
// The package has no code outside its tests. Its helpers (helpers_test.go)
// start a cluster, deploy the HAProxy pods and render and apply plans; a
// new end-to-end test in this package starts from them.
//
// # Requirements
//
// The tests need root (network namespaces), the mini cluster's binaries
// (make minicluster) and HAProxy 3.4 (make haproxy). Without them they
// skip with the reason, except under CI=true, where a missing piece fails.
// Under -short they skip. One cluster runs at a time (its ports are
// fixed), so the tests do not run in parallel.
package e2e
