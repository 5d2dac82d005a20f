package haproxysock

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// Master talks to HAProxy's master CLI socket (haproxy -W -S <path>). It
// holds configuration only and is safe for concurrent use; every call
// uses its own connection, half-closed after the command so that the
// master answers once and closes. A reload closes every master session.
type Master struct {
	// Path is the unix socket path of the master CLI.
	Path string
	// Timeout bounds each read and each write; zero means
	// [DefaultTimeout]. A reload must print its first bytes within it.
	Timeout time.Duration
	// BufSize is the workers' tune.bufsize for commands routed with
	// [Master.RunOnWorker]; zero means [DefaultBufSize].
	BufSize int
}

// Reload runs a synchronous "reload": it returns once the new worker
// serves, or the reload failed. A failed reload (Success=0) returns the
// parsed result and a [*ReloadError] with HAProxy's [ALERT] lines; the
// worker that served before keeps serving.
func (m *Master) Reload(ctx context.Context) (ReloadResult, error) {
	reply, err := m.exchange(ctx, []byte("reload\n"))
	if err != nil {
		return ReloadResult{}, fmt.Errorf("reload: %w", err)
	}
	r, err := ParseReload(reply)
	if err != nil {
		return ReloadResult{}, fmt.Errorf("reload: %w", err)
	}
	if !r.Success {
		return r, &ReloadError{Alerts: r.Alerts, Log: r.Log}
	}
	return r, nil
}

// ShowProc runs "show proc".
func (m *Master) ShowProc(ctx context.Context) (Procs, error) {
	reply, err := m.exchange(ctx, []byte("show proc\n"))
	if err != nil {
		return Procs{}, fmt.Errorf("show proc: %w", err)
	}
	p, err := ParseProcs(reply)
	if err != nil {
		return Procs{}, fmt.Errorf("show proc: %w", err)
	}
	return p, nil
}

// RunOnWorker sends each command to the worker with that PID ("@!<pid>"),
// which reaches old workers too (relative "@N" does not). Each command
// uses its own master connection; large splittable payloads are split as
// in [Client.Run]. It stops at an unknown PID ([ErrNoSuchWorker]);
// otherwise every command runs. Changes sent to a leaving worker are
// refused with "Proxy is disabled." by HAProxy. "wait" commands are
// refused before sending ([ErrInvalidArgument]): the master half-closes
// its connection to the worker, so HAProxy 3.0, 3.2 and 3.4 all answer
// them "Interrupted." at once; run them with [Client.Run] on the worker
// socket.
func (m *Master) RunOnWorker(ctx context.Context, pid int, cmds ...Command) ([]Result, error) {
	if pid <= 0 {
		return nil, fmt.Errorf("%w: pid %d", ErrInvalidArgument, pid)
	}
	for i, c := range cmds {
		if c.wait > 0 {
			return nil, fmt.Errorf("%w: command %d %q: the master interrupts wait commands; use the worker socket", ErrInvalidArgument, i+1, c.String())
		}
	}
	cl := Client{Path: m.Path, Timeout: m.Timeout, BufSize: m.BufSize}
	parts, err := cl.plan(cmds)
	if err != nil {
		return nil, err
	}
	results := make([]Result, len(cmds))
	replies := make([][]string, len(cmds))
	for i, c := range cmds {
		results[i] = Result{Command: c}
	}
	prefix := "set severity-output number; @!" + strconv.Itoa(pid) + " "
	var firstErr error
	for n, p := range parts {
		reply, err := m.exchange(ctx, append([]byte(prefix), p.cmd.wire()...))
		if err != nil {
			return results, cl.fail(results, parts, n, err)
		}
		reply = strings.Trim(reply, "\n")
		if strings.HasPrefix(reply, "Can't find the target PID") {
			err := &CommandError{Command: "@!" + strconv.Itoa(pid) + " " + p.cmd.String(), Reply: reply, Err: ErrNoSuchWorker}
			results[p.index].Err = err
			return results, cl.fail(results, parts, n+1, err)
		}
		replies[p.index] = append(replies[p.index], reply)
		if results[p.index].Err == nil {
			results[p.index].Err = classify(p.cmd, reply)
			if results[p.index].Err != nil && firstErr == nil {
				firstErr = fmt.Errorf("command %d of %d: %w", p.index+1, len(cmds), results[p.index].Err)
			}
		}
	}
	for i := range results {
		text, _ := splitSeverity(strings.Join(replies[i], "\n"))
		results[i].Reply = text
	}
	return results, firstErr
}

// exchange sends one request, half-closes the connection so that the
// master answers once and closes, and reads the answer.
func (m *Master) exchange(ctx context.Context, req []byte) (string, error) {
	if m.Path == "" {
		return "", errors.New("haproxysock: master path is empty")
	}
	timeout := m.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	conn, err := dial(ctx, m.Path, timeout)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	dl := deadliner{ctx: ctx, conn: conn, timeout: timeout}
	stop := dl.watch()
	defer stop()
	if err := writeAll(dl, conn, req); err != nil {
		return "", err
	}
	if err := conn.CloseWrite(); err != nil {
		return "", dl.ioErr("half-close", err)
	}
	var buf bytes.Buffer
	tmp := make([]byte, 32<<10)
	for {
		if err := conn.SetReadDeadline(dl.next(0)); err != nil {
			return "", dl.ioErr("read", err)
		}
		n, err := conn.Read(tmp)
		buf.Write(tmp[:n])
		if noTargetDone(buf.Bytes()) {
			return buf.String(), nil
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return buf.String(), nil
			}
			return buf.String(), dl.ioErr("read", err)
		}
	}
}

var noTarget = []byte("Can't find the target PID")

// noTargetDone reports whether the answer is a complete "Can't find the
// target PID …" line: the master may leave the connection open after it.
func noTargetDone(b []byte) bool {
	i := bytes.Index(b, noTarget)
	return i >= 0 && bytes.IndexByte(b[i:], '\n') >= 0
}
