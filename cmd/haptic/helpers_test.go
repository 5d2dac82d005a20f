package main

import (
	"os"
	"testing"

	"github.com/haptic-io/haptic/internal/haproxytest"
)

// TestMain lets the test binary act as haptic for the child processes
// haptic starts of itself: `benchmark propagation` runs os.Executable()
// with "benchmark probe-client …" and "benchmark echo-servers …", which
// would otherwise run the tests again. The agent tests run it as
// "agent …" to have an agent process to kill, the checker tests as
// "checker …".
func TestMain(m *testing.M) {
	if len(os.Args) > 2 && os.Args[1] == "benchmark" && (os.Args[2] == "probe-client" || os.Args[2] == "echo-servers") ||
		len(os.Args) > 1 && os.Args[1] == "checker" {
		if err := newApp(os.Stdout, os.Stderr).Run(os.Args); err != nil {
			os.Stderr.WriteString("haptic: " + err.Error() + "\n")
			os.Exit(exitCode(err))
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// haproxyForTests is HAProxy 3.4 for haproxy_valid assertions; the test
// is skipped under -short (haproxytest fails it with CI=true when missing).
func haproxyForTests(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("runs haproxy -c; skipped with -short")
	}
	return haproxytest.Binary(t, "3.4")
}
