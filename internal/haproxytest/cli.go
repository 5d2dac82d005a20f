package haproxytest

import (
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"
)

const (
	// cmdTimeout bounds one command: connect, write and read to EOF.
	cmdTimeout = 10 * time.Second
	// dialRetry bounds retries of a refused connect (3.0's master socket
	// refuses connections for a few ms after a reload).
	dialRetry = time.Second
)

// Cmd sends one command line to the worker stats socket in non-interactive
// mode (no half-close, so `wait …` works) and returns the raw reply. It fails
// the test on a socket error or after 10 s. It is meant for assertions in
// tests; the runtime-API client under test must not be tested with it.
func (i *Instance) Cmd(t testing.TB, line string) string {
	t.Helper()
	reply, err := i.TryCmd(line)
	if err != nil {
		t.Fatalf("haproxy %s stats socket: %v", i.Series, err)
	}
	return reply
}

// TryCmd is [Instance.Cmd] returning the error instead of failing the test.
func (i *Instance) TryCmd(line string) (string, error) {
	return send(i.StatsSocket, line, false, cmdTimeout)
}

// MasterCmd sends one command line to the master CLI socket, half-closes the
// connection (the master is non-interactive only then), reads the reply to
// EOF and returns it raw. It fails the test on a socket error or after 10 s.
func (i *Instance) MasterCmd(t testing.TB, line string) string {
	t.Helper()
	reply, err := i.TryMasterCmd(line)
	if err != nil {
		t.Fatalf("haproxy %s master socket: %v", i.Series, err)
	}
	return reply
}

// TryMasterCmd is [Instance.MasterCmd] returning the error instead of failing
// the test.
func (i *Instance) TryMasterCmd(line string) (string, error) {
	return send(i.MasterSocket, line, true, cmdTimeout)
}

// send writes line (plus a newline) to the unix socket at path, optionally
// half-closes, and reads until EOF or timeout.
func send(path, line string, halfClose bool, timeout time.Duration) (string, error) {
	deadline := time.Now().Add(timeout)
	conn, err := dial(path, deadline)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	if err := conn.SetDeadline(deadline); err != nil {
		return "", fmt.Errorf("%q on %s: %w", line, path, err)
	}
	if !strings.HasSuffix(line, "\n") {
		line += "\n"
	}
	if _, err := io.WriteString(conn, line); err != nil {
		return "", fmt.Errorf("send %q to %s: %w", strings.TrimSpace(line), path, err)
	}
	if halfClose {
		if err := conn.CloseWrite(); err != nil {
			return "", fmt.Errorf("half-close %s: %w", path, err)
		}
	}
	reply, err := io.ReadAll(conn)
	if err != nil {
		return string(reply), fmt.Errorf("read reply to %q from %s: %w (partial reply %q)", strings.TrimSpace(line), path, err, reply)
	}
	return string(reply), nil
}

// dial connects to a unix socket, retrying a refused or missing socket for
// at most dialRetry.
func dial(path string, deadline time.Time) (*net.UnixConn, error) {
	retryUntil := time.Now().Add(dialRetry)
	for {
		d := net.Dialer{Deadline: deadline}
		c, err := d.Dial("unix", path)
		if err == nil {
			return c.(*net.UnixConn), nil
		}
		retryable := errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ENOENT)
		if !retryable || time.Now().After(retryUntil) {
			return nil, fmt.Errorf("connect %s: %w", path, err)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
