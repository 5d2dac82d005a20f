package haproxytest

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"sync"
	"testing"
)

// FreePort returns a free TCP port on 127.0.0.1. The port is free when
// FreePort returns; another process may take it before the caller binds it.
//
// Ports come from below the kernel's ephemeral range, at random: a port
// the kernel hands out for :0 is also what it gives outgoing connections,
// so with many tests running at once a client socket could take it before
// HAProxy binds it. Below the range only another FreePort caller can, and
// this process never hands out a port twice.
func FreePort(t testing.TB) int {
	t.Helper()
	low := ephemeralLow()
	for range 64 {
		if low <= minFreePort+1000 {
			break
		}
		port := minFreePort + rand.IntN(low-minFreePort)
		if !handOut(port) {
			continue
		}
		if l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
			_ = l.Close()
			return port
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("find a free port: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// minFreePort is the lowest port FreePort picks: above the well-known and
// commonly registered service ports.
const minFreePort = 12000

var (
	handedMu sync.Mutex
	handed   = map[int]bool{}
)

// handOut records port as given out by this process; false if it was.
func handOut(port int) bool {
	handedMu.Lock()
	defer handedMu.Unlock()
	if handed[port] {
		return false
	}
	handed[port] = true
	return true
}

// ephemeralLow is the first port of the kernel's ephemeral range (32768
// when it cannot be read).
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 32768
	}
	var low, high int
	if _, err := fmt.Sscan(string(b), &low, &high); err != nil || low <= 0 {
		return 32768
	}
	return low
}
