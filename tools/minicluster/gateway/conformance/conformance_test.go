package conformance

import (
	"os"
	"testing"

	"sigs.k8s.io/gateway-api/conformance"
)

// TestConformance runs the upstream suite with options taken from its
// command-line flags. It needs a cluster: without KUBECONFIG it skips, so a
// stray `go test ./...` in this module does not dial anything.
func TestConformance(t *testing.T) {
	if os.Getenv("KUBECONFIG") == "" {
		t.Skip("KUBECONFIG is not set: the conformance suite needs a running cluster (see internal/testenv/minicluster)")
	}
	conformance.RunConformance(t)
}
