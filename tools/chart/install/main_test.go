package install_test

import (
	"os"
	"testing"

	"github.com/haptic-io/haptic/internal/testenv/minicluster"
)

// TestMain runs the tests inside a private network namespace (as root;
// see minicluster.Main), then removes the haptic binary they built.
func TestMain(m *testing.M) {
	code := minicluster.Run(m)
	if hapticDir != "" {
		_ = os.RemoveAll(hapticDir)
	}
	os.Exit(code)
}
