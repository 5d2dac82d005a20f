// Package install installs charts/haptic on the test-only mini cluster
// ([github.com/haptic-io/haptic/internal/testenv/minicluster]) the way an
// operator does, through the Helm SDK's install, upgrade and uninstall
// actions, and drives the release over its real interfaces: the process
// kubelet runs the controller pods in-cluster (their service-account
// token, the kubernetes Service) and the HAProxy pods, and traffic goes
// through the HAProxy Service's ClusterIP and the pods' IPs.
//
// The package has no code outside its tests. They need root (network
// namespaces), the mini cluster's binaries (make minicluster) and HAProxy
// 3.4 (make haproxy); without them they skip with the reason, except
// under CI=true, where a missing piece fails. Under -short they skip.
package install
