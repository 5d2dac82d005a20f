// Package conformance holds the Gateway API conformance suite (v1.6.3) as a
// test binary. hack/build-minicluster.sh compiles it with `go test -c` into
// .cache/minicluster/bin/conformance.test; it is run against a mini cluster
// (internal/testenv/minicluster) with KUBECONFIG pointing at it and the
// suite's own flags (--gateway-class, --supported-features, --run-test, ...).
// The package has no non-test code and starts no goroutines of its own.
package conformance
