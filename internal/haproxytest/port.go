package haproxytest

import (
	"net"
	"testing"
)

// FreePort returns a free TCP port on 127.0.0.1. The port is free when
// FreePort returns; another process may take it before the caller binds it.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("find a free port: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
