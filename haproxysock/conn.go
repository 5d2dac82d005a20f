package haproxysock

import (
	"context"
	"errors"
	"fmt"
	"net"
	"syscall"
	"time"
)

// Defaults for zero configuration fields.
const (
	// DefaultTimeout bounds every read and write.
	DefaultTimeout = 10 * time.Second
	// DefaultBufSize is HAProxy's default tune.bufsize.
	DefaultBufSize = 16384
)

// dialAttempts bounds the retries of a refused connection: HAProxy 3.0's
// master refuses connections for a few milliseconds after a reload.
const (
	dialAttempts = 10
	dialBackoff  = 20 * time.Millisecond
)

// dial connects to a unix socket, retrying a bounded number of times while
// the connection is refused.
func dial(ctx context.Context, path string, timeout time.Duration) (*net.UnixConn, error) {
	d := net.Dialer{Timeout: timeout}
	var last error
	for attempt := 0; attempt < dialAttempts; attempt++ {
		c, err := d.DialContext(ctx, "unix", path)
		if err == nil {
			return c.(*net.UnixConn), nil
		}
		last = err
		if !errors.Is(err, syscall.ECONNREFUSED) {
			break
		}
		t := time.NewTimer(dialBackoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("dial %s: %w", path, ctx.Err())
		case <-t.C:
		}
	}
	return nil, fmt.Errorf("dial %s: %w", path, last)
}

// deadliner bounds each I/O operation by a per-operation timeout and the
// context's deadline, and unblocks everything when the context ends.
type deadliner struct {
	ctx     context.Context
	conn    net.Conn
	timeout time.Duration
}

// watch makes a cancelled context interrupt blocked I/O. The returned func
// must be called when the connection is no longer used.
func (d deadliner) watch() (stop func() bool) {
	return context.AfterFunc(d.ctx, func() {
		_ = d.conn.SetDeadline(time.Unix(1, 0))
	})
}

func (d deadliner) next(extra time.Duration) time.Time {
	t := time.Now().Add(d.timeout + extra)
	if dl, ok := d.ctx.Deadline(); ok && dl.Before(t) {
		t = dl
	}
	return t
}

// ioErr turns a deadline error caused by the context into the context's
// error.
func (d deadliner) ioErr(op string, err error) error {
	if cerr := d.ctx.Err(); cerr != nil {
		return fmt.Errorf("%s: %w", op, cerr)
	}
	if dl, ok := d.ctx.Deadline(); ok && !time.Now().Before(dl) {
		// The I/O deadline was the context's; its timer may not have
		// fired yet.
		return fmt.Errorf("%s: %w", op, context.DeadlineExceeded)
	}
	return fmt.Errorf("%s: %w", op, err)
}
