package haproxysock

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"
	"sync"
	"time"
)

// Session runs several batches of commands, one after the other, on one
// connection to a worker's stats socket. It dials on its first Run and
// sends "prompt" and "set severity-output number" once, with that Run's
// commands, so a session of n batches costs one connection and n round
// trips where n calls to [Client.Run] cost n connections. Each Run reads
// its answers up to its own sentinel, so the batches keep their order and
// a batch may depend on an earlier one's answer (a map version).
//
// A command HAProxy refuses leaves the session usable. A transport or
// framing failure (a closed connection, a timeout, a cancelled context, a
// wrong sentinel) ends it: the connection is closed and every later Run
// reports [ErrSessionClosed] with the cause, sending nothing. A session is
// bound to the worker it first reached: after a reload it keeps talking
// to the old worker, so callers open one per unit of work that no reload
// interrupts. Runs on one session are serialised; Close ends it.
type Session struct {
	c Client

	mu      sync.Mutex
	conn    *net.UnixConn // nil until the first Run dials
	started bool          // "prompt" and "set severity-output" were sent
	rd      promptReader
	closed  error // non-nil once the session is unusable; wraps ErrSessionClosed
}

// setup switches a new connection to interactive mode with numeric
// severities. It is sent once per connection: on 3.0 "prompt" toggles.
const setup = "prompt\nset severity-output number\n"

// setupAnswers is the number of prompts setup produces.
const setupAnswers = 2

// Session returns a session on the socket at c.Path with c's timeouts and
// buffer size. It does no I/O: the first Run dials. The caller must Close
// it.
func (c *Client) Session() *Session {
	return &Session{c: *c}
}

// Run sends cmds on the session's connection, one per line, followed by
// a sentinel, and reads every answer, exactly as [Client.Run] does: every
// command is sent whatever the outcome of the ones before it, the results
// hold one [Result] per command, and the error is a transport or framing
// failure or the first command's [*CommandError]. A "wait" command
// extends the read timeout of its batch by its delay. A Run that fails
// to plan (a command too long, a zero Command) sends nothing and leaves
// the session usable.
func (s *Session) Run(ctx context.Context, cmds ...Command) ([]Result, error) {
	if s.c.Path == "" {
		return nil, errors.New("haproxysock: client path is empty")
	}
	parts, err := s.c.plan(cmds)
	if err != nil {
		return nil, err
	}
	results := make([]Result, len(cmds))
	for i, cmd := range cmds {
		results[i] = Result{Command: cmd}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed != nil {
		return results, s.c.fail(results, parts, 0, s.closed)
	}
	if len(cmds) == 0 {
		return results, nil
	}
	if s.conn == nil {
		conn, err := dial(ctx, s.c.Path, s.c.timeout())
		if err != nil {
			s.closed = fmt.Errorf("%w: %w", ErrSessionClosed, err)
			return results, s.c.fail(results, parts, 0, err)
		}
		s.conn = conn
	}
	return s.run(ctx, parts, results)
}

// Close closes the connection. Later Runs report [ErrSessionClosed].
// Closing twice, or a session that never ran, is allowed.
func (s *Session) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed == nil {
		s.closed = ErrSessionClosed
	}
	if s.conn == nil {
		return nil
	}
	err := s.conn.Close()
	s.conn = nil
	if err != nil && !errors.Is(err, net.ErrClosed) {
		return fmt.Errorf("close session on %s: %w", s.c.Path, err)
	}
	return nil
}

// end makes the session unusable because of cause and closes its
// connection. s.mu must be held.
func (s *Session) end(cause error) {
	if s.closed == nil {
		s.closed = fmt.Errorf("%w by an earlier failure: %w", ErrSessionClosed, cause)
	}
	if s.conn != nil {
		_ = s.conn.Close()
		s.conn = nil
	}
}

// run writes one batch and reads its answers. s.mu must be held and
// s.conn set.
func (s *Session) run(ctx context.Context, parts []part, results []Result) ([]Result, error) {
	var wait time.Duration
	var out bytes.Buffer
	skip := 0 // answers to setup before the batch's
	if !s.started {
		out.WriteString(setup)
		skip = setupAnswers
		s.started = true
	}
	for _, p := range parts {
		out.Write(p.cmd.wire())
		wait += p.cmd.wait
	}
	out.Write(sentinel.wire())

	conn := s.conn
	dl := deadliner{ctx: ctx, conn: conn, timeout: s.c.timeout()}
	stop := dl.watch()
	var segs []string
	var werr, rerr error
	if out.Len() <= inlineWrite {
		// The batch fits in the socket's send buffer: the write cannot
		// wait for HAProxy's answers, so no writer goroutine is needed.
		if werr = writeAll(dl, conn, out.Bytes()); werr == nil {
			segs, rerr = s.rd.read(dl, conn, skip+len(parts)+1, wait)
		}
	} else {
		// HAProxy answers while it reads: read while writing, or both
		// sides could fill their buffers and wait for each other.
		var wg sync.WaitGroup
		wg.Go(func() {
			werr = writeAll(dl, conn, out.Bytes())
			if werr != nil {
				// Unblock the reader: nothing more will be answered.
				_ = conn.SetReadDeadline(time.Unix(1, 0))
			}
		})
		segs, rerr = s.rd.read(dl, conn, skip+len(parts)+1, wait)
		if rerr != nil {
			// Unblock the writer.
			_ = conn.Close()
		}
		wg.Wait()
	}
	// A context that ended during the batch set a deadline in the past on
	// the connection, perhaps after the last I/O: do not reuse it.
	interrupted := !stop()

	answered := max(len(segs)-skip, 0)
	replies := make([][]string, len(results))
	for i := 0; i < answered && i < len(parts); i++ {
		p := parts[i]
		reply := cleanReply(segs[skip+i])
		text, _ := splitSeverity(reply)
		replies[p.index] = append(replies[p.index], text)
		if results[p.index].Err == nil {
			results[p.index].Err = classify(p.cmd, reply)
		}
	}
	for i := range results {
		results[i].Reply = strings.Join(replies[i], "\n")
	}

	switch {
	case rerr != nil:
		if werr != nil && !errors.Is(rerr, context.Canceled) && !errors.Is(rerr, context.DeadlineExceeded) {
			rerr = fmt.Errorf("%w (write: %w)", rerr, werr)
		}
		s.end(rerr)
		return results, s.c.fail(results, parts, answered, rerr)
	case werr != nil:
		s.end(werr)
		return results, s.c.fail(results, parts, answered, werr)
	}
	if got, _ := splitSeverity(cleanReply(segs[len(segs)-1])); !versionReply.MatchString(got) {
		err := fmt.Errorf("%w: sentinel answered %q", ErrProtocol, got)
		s.end(err)
		return results, s.c.fail(results, parts, answered, err)
	}
	if interrupted {
		s.end(fmt.Errorf("context ended during a run: %w", context.Cause(ctx)))
	}
	for i, r := range results {
		if r.Err != nil {
			return results, fmt.Errorf("command %d of %d: %w", i+1, len(results), r.Err)
		}
	}
	return results, nil
}

// inlineWrite is the largest batch written without a concurrent reader:
// well below a unix socket's default send buffer (about 200 KiB on
// Linux), so the write completes whatever HAProxy answers meanwhile.
const inlineWrite = 16 << 10

// prompt ends every answer in interactive mode.
var prompt = []byte("\n> ")

// minRead is the least free space a read is given.
const minRead = 16 << 10

// promptReader splits a connection's bytes into answers at each prompt.
// It keeps what it read past the last prompt for the next call, so that
// batches on one connection stay aligned.
type promptReader struct {
	buf   []byte
	start int // first byte not yet returned
	scan  int // where the next prompt search starts (≥ start)
	// room is the least free space a read is given; zero means minRead.
	room int
}

// read reads until n more prompts have arrived and returns the text before
// each. It returns the segments read so far with an error when the
// connection ends early or a read times out; extra lengthens every read's
// timeout (a "wait" in the batch).
func (p *promptReader) read(dl deadliner, r net.Conn, n int, extra time.Duration) ([]string, error) {
	segs := make([]string, 0, n)
	for len(segs) < n {
		if i := bytes.Index(p.buf[p.scan:], prompt); i >= 0 {
			end := p.scan + i
			segs = append(segs, string(p.buf[p.start:end]))
			p.start = end + len(prompt)
			p.scan = p.start
			continue
		}
		p.scan = max(p.start, len(p.buf)-len(prompt)+1)
		p.makeRoom()
		if err := r.SetReadDeadline(dl.next(extra)); err != nil {
			return segs, dl.ioErr("read", err)
		}
		m, err := r.Read(p.buf[len(p.buf):cap(p.buf)])
		p.buf = p.buf[:len(p.buf)+m]
		if err != nil {
			if m > 0 {
				continue
			}
			if errors.Is(err, io.EOF) {
				return segs, fmt.Errorf("%w: connection closed after %d of %d answers (last bytes %q)", ErrProtocol, len(segs), n, tail(p.buf[p.start:]))
			}
			return segs, dl.ioErr(fmt.Sprintf("read answer %d of %d", len(segs)+1, n), err)
		}
	}
	return segs, nil
}

// makeRoom drops the bytes already returned and makes sure a read has at
// least p.room bytes of space.
func (p *promptReader) makeRoom() {
	room := p.room
	if room <= 0 {
		room = minRead
	}
	if p.start == len(p.buf) {
		p.buf, p.start, p.scan = p.buf[:0], 0, 0
	}
	if cap(p.buf)-len(p.buf) >= room {
		return
	}
	if p.start > 0 {
		n := copy(p.buf, p.buf[p.start:])
		p.buf, p.scan, p.start = p.buf[:n], p.scan-p.start, 0
	}
	if cap(p.buf)-len(p.buf) < room {
		p.buf = slices.Grow(p.buf, max(4*room, len(p.buf)))
	}
}
