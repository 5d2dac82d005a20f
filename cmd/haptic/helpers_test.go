package main

import (
	"testing"

	"github.com/haptic-io/haptic/internal/haproxytest"
)

// haproxyForTests is HAProxy 3.4 for haproxy_valid assertions; the test
// is skipped under -short (haproxytest fails it with CI=true when missing).
func haproxyForTests(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("runs haproxy -c; skipped with -short")
	}
	return haproxytest.Binary(t, "3.4")
}
