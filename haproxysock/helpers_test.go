package haproxysock_test

import (
	"bufio"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/haptic-io/haptic/haproxysock"
)

// cliSplit re-implements how HAProxy's CLI reads one request line (src/cli.c
// and the master's pcli_parse_request): commands end at an unescaped ';' or
// '\n' (a backslash escapes the next byte, whatever it is), then each
// command is split into words at unescaped spaces and tabs, and "\\x"
// becomes "x" ("\\\\" becomes "\\"). payload reports whether HAProxy would
// switch to payload mode after the line: the text after the last space or
// tab, escaped or not, starts with "<<" and is at most 9 bytes long.
func cliSplit(line string) (cmds [][]string, payload bool) {
	var cur strings.Builder
	var raw []string
	for i := 0; i < len(line); i++ {
		c := line[i]
		if c == '\\' && i+1 < len(line) {
			cur.WriteByte(c)
			cur.WriteByte(line[i+1])
			i++
			continue
		}
		if c == ';' || c == '\n' {
			raw = append(raw, cur.String())
			cur.Reset()
			continue
		}
		cur.WriteByte(c)
	}
	raw = append(raw, cur.String())
	for _, r := range raw {
		cmds = append(cmds, cliWords(r))
	}
	last := raw[len(raw)-1]
	lastArg := last
	if i := strings.LastIndexAny(last, " \t"); i >= 0 {
		lastArg = last[i+1:]
	}
	payload = strings.HasPrefix(lastArg, "<<") && len(lastArg)-2 < 8
	return cmds, payload
}

// cliWords splits one command into unescaped words (cli_parse_request).
func cliWords(s string) []string {
	var words []string
	i := 0
	for i < len(s) {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
		if i >= len(s) {
			break
		}
		start := i
		for i < len(s) && s[i] != ' ' && s[i] != '\t' {
			if s[i] == '\\' {
				i += 2
				continue
			}
			i++
		}
		i = min(i, len(s))
		w := s[start:i]
		var b strings.Builder
		for k := 0; k < len(w); k++ {
			if w[k] == '\\' {
				if k+1 < len(w) && w[k+1] == '\\' {
					k++
				} else {
					continue
				}
			}
			b.WriteByte(w[k])
		}
		words = append(words, b.String())
	}
	return words
}

// shortDir returns a temporary directory with a path short enough for a
// unix socket.
func shortDir(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp("", "hs")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

// fakeServer is a unix listener whose connections are served by handle.
// It waits for its handlers at cleanup.
func fakeServer(t *testing.T, handle func(net.Conn)) string {
	t.Helper()
	path := filepath.Join(shortDir(t), "s.sock")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			wg.Go(func() {
				defer c.Close()
				handle(c)
			})
		}
	})
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return path
}

// fakeCLI emulates a worker stats socket in interactive mode as HAProxy
// 3.2/3.4 frames it: "prompt" enables the "\n> " prompt, "set
// severity-output number" prefixes messages with "[N]: ", a line ending in
// "<<" starts a payload ended by an empty line. answer returns the message
// and its severity for one command (its words and payload lines).
type fakeCLI struct {
	answer func(words []string, payload []string) (msg string, severity int)
	// maxLine closes the connection on longer lines, like 3.2/3.4.
	maxLine int

	mu       sync.Mutex
	commands [][]string // every command received, payload lines appended
}

func (f *fakeCLI) received() [][]string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([][]string(nil), f.commands...)
}

func (f *fakeCLI) serve(c net.Conn) {
	r := bufio.NewReaderSize(c, 1<<20)
	w := bufio.NewWriter(c)
	promptOn, sevOn := false, false
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		if f.maxLine > 0 && len(line) > f.maxLine {
			return
		}
		cmds, payload := cliSplit(strings.TrimSuffix(line, "\n"))
		words := cmds[0]
		var lines []string
		if payload {
			words = words[:len(words)-1]
			for {
				l, err := r.ReadString('\n')
				if err != nil {
					return
				}
				l = strings.TrimSuffix(l, "\n")
				if l == "" {
					break
				}
				lines = append(lines, l)
			}
		}
		var msg string
		sev := 6
		switch strings.Join(words, " ") {
		case "prompt":
			promptOn = !promptOn
		case "set severity-output number":
			sevOn = true
		case "show version":
			msg = "3.4.7-1\n"
		default:
			f.mu.Lock()
			f.commands = append(f.commands, append(append([]string(nil), words...), lines...))
			f.mu.Unlock()
			msg, sev = f.answer(words, lines)
		}
		if msg != "" && sevOn && sev >= 0 {
			msg = "[" + string(rune('0'+sev)) + "]: " + msg
		}
		w.WriteString(msg)
		if promptOn {
			w.WriteString("\n> ")
		} else {
			w.WriteString("\n")
		}
		if r.Buffered() == 0 {
			if err := w.Flush(); err != nil {
				return
			}
		}
		if !promptOn {
			w.Flush()
			return
		}
	}
}

// isTimeout reports whether err is a deadline error.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// mustBuild returns a function that fails the test when a builder fails.
// Use as mustBuild(t)(haproxysock.SetMap(…)).
func mustBuild(t testing.TB) func(haproxysock.Command, error) haproxysock.Command {
	return func(c haproxysock.Command, err error) haproxysock.Command {
		t.Helper()
		if err != nil {
			t.Fatalf("build: %v", err)
		}
		return c
	}
}

// checkWire asserts the injection properties of a built command: its line
// holds no raw newline or NUL, HAProxy's tokenizer reads exactly one
// command with exactly the intended arguments, and payload mode starts
// only for payload commands.
func checkWire(t *testing.T, c haproxysock.Command) {
	t.Helper()
	line := c.String()
	if strings.ContainsAny(line, "\n\r\x00") {
		t.Fatalf("line %q holds a raw newline, CR or NUL", line)
	}
	cmds, payload := cliSplit(line)
	if len(cmds) != 1 {
		t.Fatalf("line %q reads as %d commands: %q", line, len(cmds), cmds)
	}
	wantPayload := c.Payload() != nil
	if payload != wantPayload {
		t.Fatalf("line %q: payload mode %v, want %v", line, payload, wantPayload)
	}
	args := cmds[0]
	if payload {
		args = args[:len(args)-1]
	}
	if diff := cmp.Diff(c.Args(), args); diff != "" {
		t.Fatalf("line %q tokenizes differently (-built +tokenized):\n%s", line, diff)
	}
	for _, p := range c.Payload() {
		if p == "" || strings.ContainsAny(p, "\n\r\x00") {
			t.Fatalf("payload line %q is empty or holds a newline, CR or NUL", p)
		}
	}
}

// checkRefused asserts that a builder error is ErrInvalidArgument.
func checkRefused(t *testing.T, err error) {
	t.Helper()
	if !errors.Is(err, haproxysock.ErrInvalidArgument) {
		t.Fatalf("builder error %v is not ErrInvalidArgument", err)
	}
}

func removeFile(path string) error { return os.Remove(path) }

func writeFile(path, content string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(content), 0o600)
}

func readFile(path string) (string, error) {
	b, err := os.ReadFile(path)
	return string(b), err
}
