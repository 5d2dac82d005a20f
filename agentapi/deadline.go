package agentapi

import (
	"net/http"
	"time"
)

// Defaults of the read deadlines of an apply request ([HandlerOptions]).
const (
	// DefaultReadTimeout bounds reading an apply's manifest, and each
	// file body beyond the time its size needs at the minimum rate.
	DefaultReadTimeout = 10 * time.Second
	// DefaultMinReadRate is the slowest rate, in bytes per second, at
	// which a body is read before its deadline passes: 1 MiB/s.
	DefaultMinReadRate int64 = 1 << 20
)

// readDeadline moves the read deadline of one request ahead of each part
// of it: a part of n bytes must arrive within timeout plus the time n
// bytes take at rate. A client that trickles its request (a byte a
// second) is cut at the deadline, while a large body gets the time its
// size needs. The zero readDeadline (nil rc) sets nothing.
type readDeadline struct {
	rc      *http.ResponseController
	timeout time.Duration
	rate    int64 // bytes per second, > 0
}

// expect sets the deadline for the next n bytes. A ResponseWriter that
// cannot set deadlines (a test recorder) is left alone.
func (d readDeadline) expect(n int64) {
	if d.rc == nil {
		return
	}
	allow := d.timeout + time.Duration(float64(n)/float64(d.rate)*float64(time.Second))
	_ = d.rc.SetReadDeadline(time.Now().Add(allow))
}

// clear removes the deadline once the request is read: the apply that
// follows may take its time, and the server sets the next request's own.
func (d readDeadline) clear() {
	if d.rc != nil {
		_ = d.rc.SetReadDeadline(time.Time{})
	}
}
