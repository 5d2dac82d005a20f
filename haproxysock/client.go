package haproxysock

import (
	"context"
	"fmt"
	"net"
	"regexp"
	"strings"
	"time"
)

// Client runs commands on a worker's stats socket (level admin). The zero
// value is not usable: Path is required. A Client holds configuration
// only; it is safe for concurrent use, each call using its own connection.
type Client struct {
	// Path is the unix socket path of the worker's stats socket.
	Path string
	// Timeout bounds each read and each write (not the whole call; use the
	// context for that). Zero means [DefaultTimeout]. A "wait" command
	// extends the read timeout of its batch by its own delay.
	Timeout time.Duration
	// BufSize is HAProxy's tune.bufsize in bytes. Zero means
	// [DefaultBufSize]. Lines and payloads are kept to three quarters of it.
	BufSize int
}

// Result is the outcome of one command of a batch.
type Result struct {
	// Command is the command as given to Run.
	Command Command
	// Reply is HAProxy's answer without the prompt and severity framing,
	// trailing newlines removed. A command split into several (a large
	// payload) has the replies of its parts joined by newlines.
	Reply string
	// Err is nil on success, a [*CommandError] when HAProxy refused the
	// command, or [ErrNotRun] (wrapped) when the session ended before it.
	Err error
}

// sentinel is sent after the batch: its answer proves that every command
// before it was answered. "echo" would do but does not exist in 3.0.
var sentinel = ShowVersion()

var versionReply = regexp.MustCompile(`^\d+\.\d+`)

// Run sends cmds on one connection in interactive mode, one per line, and
// reads every answer. Every command is sent, whatever the outcome of the
// ones before it. It returns one Result per command and an error that is
// either a transport or framing failure (the results hold what was
// answered) or the first command's failure, found with errors.As as a
// [*CommandError]. Answers are delimited by the interactive prompt ("\n> "),
// so a show command whose output holds a line starting with "> " would be
// misread; no HAProxy object name can start that way. Run is a [Session]
// used once: to run several batches in a row, open one with
// [Client.Session] and save a connection and its setup per batch.
func (c *Client) Run(ctx context.Context, cmds ...Command) ([]Result, error) {
	s := c.Session()
	defer s.Close()
	return s.Run(ctx, cmds...)
}

// fail marks the commands whose parts were not all answered as not run
// (unless they already carry an error) and wraps err.
func (c *Client) fail(results []Result, parts []part, answered int, err error) error {
	for i := answered; i < len(parts); i++ {
		r := &results[parts[i].index]
		if r.Err == nil {
			r.Err = fmt.Errorf("%w: %w", ErrNotRun, err)
		}
	}
	return fmt.Errorf("run on %s: %w", c.Path, err)
}

// part is one wire command and the index of the Command it came from.
type part struct {
	cmd   Command
	index int
}

// plan checks the size of every command and splits large splittable
// payloads.
func (c *Client) plan(cmds []Command) ([]part, error) {
	limit := c.limit()
	parts := make([]part, 0, len(cmds))
	for i, cmd := range cmds {
		if cmd.IsZero() {
			return nil, fmt.Errorf("%w: command %d is the zero Command", ErrInvalidArgument, i+1)
		}
		if cmd.wireLen() <= limit {
			parts = append(parts, part{cmd: cmd, index: i})
			continue
		}
		if !cmd.splittable {
			return nil, fmt.Errorf("%w: command %d (%.60q…) is %d bytes, limit %d", ErrTooLong, i+1, cmd.String(), cmd.wireLen(), limit)
		}
		chunks, err := splitPayload(cmd, limit)
		if err != nil {
			return nil, fmt.Errorf("command %d: %w", i+1, err)
		}
		for _, ch := range chunks {
			parts = append(parts, part{cmd: ch, index: i})
		}
	}
	return parts, nil
}

// splitPayload cuts a splittable payload command into commands that each
// fit in limit bytes on the wire.
func splitPayload(cmd Command, limit int) ([]Command, error) {
	head := len(cmd.String()) + 1 + 1 // line, newline, final empty line
	var out []Command
	start, size := 0, head
	for i, l := range cmd.payload {
		n := len(l) + 1
		if head+n > limit {
			return nil, fmt.Errorf("%w: payload line %d is %d bytes, limit %d", ErrTooLong, i+1, n, limit-head)
		}
		if size+n > limit {
			out = append(out, withPayload(cmd, cmd.payload[start:i]))
			start, size = i, head
		}
		size += n
	}
	out = append(out, withPayload(cmd, cmd.payload[start:]))
	return out, nil
}

func withPayload(cmd Command, lines []string) Command {
	cmd.payload = lines
	return cmd
}

func (c *Client) timeout() time.Duration {
	if c.Timeout > 0 {
		return c.Timeout
	}
	return DefaultTimeout
}

func (c *Client) limit() int {
	b := c.BufSize
	if b <= 0 {
		b = DefaultBufSize
	}
	return b * 3 / 4
}

// writeChunk bounds one write so that the per-operation timeout measures
// progress, not the whole batch.
const writeChunk = 32 << 10

func writeAll(dl deadliner, conn net.Conn, b []byte) error {
	for len(b) > 0 {
		n := min(len(b), writeChunk)
		if err := conn.SetWriteDeadline(dl.next(0)); err != nil {
			return dl.ioErr("write", err)
		}
		w, err := conn.Write(b[:n])
		if err != nil {
			return dl.ioErr("write", err)
		}
		b = b[w:]
	}
	return nil
}

func tail(b []byte) string {
	if len(b) > 200 {
		b = b[len(b)-200:]
	}
	return string(b)
}

// cleanReply removes payload continuation prompts ("+ ") and trailing
// newlines from one answer.
func cleanReply(s string) string {
	for strings.HasPrefix(s, "+ ") {
		s = s[2:]
	}
	return strings.TrimRight(s, "\n")
}
