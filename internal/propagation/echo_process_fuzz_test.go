package propagation

import (
	"net/netip"
	"testing"
)

// FuzzDecodeEchoEvent checks that decodeEchoEvent accepts only n loopback
// addresses with a port.
func FuzzDecodeEchoEvent(f *testing.F) {
	f.Add([]byte(`{"event":"listening","echo":["127.0.0.1:40001","127.0.0.1:40002"]}`), 2)
	f.Add([]byte(`{"event":"listening","echo":["[::1]:8080"]}`), 1)
	f.Fuzz(func(t *testing.T, line []byte, n int) {
		addrs, err := decodeEchoEvent(line, n)
		if err != nil {
			return
		}
		if len(addrs) != n {
			t.Fatalf("%d addresses accepted, want %d", len(addrs), n)
		}
		for _, a := range addrs {
			ap, err := netip.ParseAddrPort(a)
			if err != nil || !ap.Addr().IsLoopback() || ap.Port() == 0 {
				t.Fatalf("address %q accepted: %v", a, err)
			}
		}
	})
}
