package main

import (
	"bytes"
	"sync"
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

// lockedBuffer is a bytes.Buffer safe for concurrent writes and reads.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
