// Package minicluster runs a real Kubernetes control plane for tests: etcd,
// kube-apiserver and kube-controller-manager built from Go modules by
// hack/build-minicluster.sh, on 127.0.0.1 inside a network namespace that the
// test binary creates for itself. Together with the process kubelet in
// [github.com/haptic-io/haptic/internal/testenv/minicluster/kubelet] it gives
// Deployments, Pods with their own IPs, EndpointSlices and pods/log without a
// container runtime.
//
// # Sandbox
//
// A test package that uses the cluster calls [Main] from TestMain. As root,
// Main re-executes the test binary in a new network and mount namespace,
// brings lo up and mounts a private tmpfs on /run/netns, so that nothing the
// cluster or its pods start binds the host's interfaces. [InSandbox] reports
// whether that worked and why not. [Run] is Main returning the exit code,
// for a TestMain that cleans up after its tests.
//
// # Cluster
//
// [Start] generates a PKI with crypto/x509 (see [NewPKI]), starts the three
// processes with their data under Config.Dir, and waits for /readyz and for
// the default ServiceAccount. [Cluster.Stop] kills them by PID. [StartT] does
// the same for a test, skipping (or failing under CI=true) with the reason
// when the binaries or the sandbox are missing.
//
// # Use
//
//	func TestMain(m *testing.M) { minicluster.Main(m) }
//
//	func TestSomething(t *testing.T) {
//		c, bins := minicluster.StartT(t) // skips under -short
//		cs, _ := kubernetes.NewForConfig(c.RESTConfig())
//		_ = minicluster.InstallGatewayCRDs(ctx, c.RESTConfig(), bins.GatewayCRDDir)
//		kubelet.StartT(t, kubelet.Config{Client: cs, Dir: t.TempDir(),
//			Images:         kubelet.ConformanceImages(bins.EchoBasic),
//			ServingCertPEM: c.PKI.Kubelet.CertPEM, ServingKeyPEM: c.PKI.Kubelet.KeyPEM})
//		// ... c.KubeconfigPath serves as KUBECONFIG for bins.ConformanceTest.
//	}
//
// Every port is fixed (etcd 2379/2380, apiserver 6443, controller manager
// 10257, kubelet 10250, all on 127.0.0.1), so one test binary runs one
// cluster at a time.
//
// # I/O and concurrency
//
// Start, Stop, [Apply] and [InstallGatewayCRDs] do I/O: processes, files and
// HTTPS to the apiserver. A *Cluster is safe for concurrent use once
// started; Stop may be called more than once. [SplitManifests] and the PKI
// helpers are pure apart from key generation.
package minicluster
