package minicluster_test

import (
	"testing"

	"github.com/haptic-io/haptic/internal/testenv/minicluster"
)

// TestMain runs the package's tests inside a private network namespace (as
// root; see minicluster.Main).
func TestMain(m *testing.M) { minicluster.Main(m) }
