package haproxysock

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors. Callers branch on them with [errors.Is].
var (
	// ErrUnsupported means this HAProxy does not know the command: it
	// answered "Unknown command" (for example "add backend" before 3.4).
	ErrUnsupported = errors.New("haproxysock: command not supported by this haproxy")
	// ErrInvalidArgument means a builder refused a field value.
	ErrInvalidArgument = errors.New("haproxysock: invalid argument")
	// ErrTooLong means a command line or a payload that may not be split
	// does not fit in HAProxy's session buffer (tune.bufsize).
	ErrTooLong = errors.New("haproxysock: command too long for tune.bufsize")
	// ErrProtocol means the conversation did not follow the CLI framing,
	// for example the connection closed before every answer arrived.
	ErrProtocol = errors.New("haproxysock: unexpected cli framing")
	// ErrNoSuchWorker means the master knows no worker with that PID.
	ErrNoSuchWorker = errors.New("haproxysock: no such worker")
	// ErrNotRun means the command was not run because an earlier failure
	// ended the session before it.
	ErrNotRun = errors.New("haproxysock: command not run")
	// ErrSessionClosed means a [Session] was closed, or ended by an
	// earlier transport or framing failure, and sends nothing more.
	ErrSessionClosed = errors.New("haproxysock: session closed")
)

// CommandError is HAProxy refusing one command. It keeps the line sent and
// HAProxy's reply verbatim (without the prompt and severity framing this
// package adds). Err is [ErrUnsupported] for unknown commands, else nil.
type CommandError struct {
	// Command is the wire line sent, without payload.
	Command string
	// Reply is HAProxy's answer.
	Reply string
	// Err is the classified cause, if any ([ErrUnsupported]).
	Err error
}

func (e *CommandError) Error() string {
	reply := strings.TrimSpace(e.Reply)
	if reply == "" {
		reply = "(empty reply)"
	}
	if i := strings.IndexByte(reply, '\n'); i >= 0 {
		if last := lastNonEmptyLine(reply); last != "" {
			reply = reply[:i] + " … " + last
		}
	}
	return fmt.Sprintf("haproxy refused %q: %s", e.Command, reply)
}

// Unwrap returns the classified cause, if any.
func (e *CommandError) Unwrap() error { return e.Err }

// ReloadError is a reload that HAProxy answered with Success=0. The serving
// worker is untouched. Alerts are HAProxy's [ALERT] lines; Log is the whole
// startup log of the failed attempt.
type ReloadError struct {
	Alerts []string
	Log    string
}

func (e *ReloadError) Error() string {
	if len(e.Alerts) == 0 {
		return "haproxy reload failed (Success=0)"
	}
	return "haproxy reload failed: " + strings.Join(e.Alerts, "; ")
}
