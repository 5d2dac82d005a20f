package haproxysock_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/haptic-io/haptic/haproxysock"
)

// mapAnswers answers like HAProxy for map and server commands on a fake.
func mapAnswers(words, payload []string) (string, int) {
	switch {
	case len(words) >= 2 && words[0] == "set" && words[1] == "map" && words[3] == "missing":
		return "entry not found.\n", 3
	case len(words) >= 2 && words[0] == "add" && words[1] == "server":
		return "New server registered.\n", 6
	case len(words) >= 2 && words[0] == "add" && words[1] == "backend":
		return "Unknown command: 'add', but maybe one of the following ones is a better match:\n  add map …\n", 6
	}
	return "", -1
}

func TestRunReturnsOneResultPerCommandInOrder(t *testing.T) {
	fake := &fakeCLI{answer: mapAnswers}
	path := fakeServer(t, fake.serve)
	c := &haproxysock.Client{Path: path, Timeout: 2 * time.Second}
	b := mustBuild(t)
	cmds := []haproxysock.Command{
		b(haproxysock.SetMap("/m", "k", "a b")),
		b(haproxysock.SetMap("/m", "missing", "x")),
		b(haproxysock.AddServer("be", "s", "127.0.0.1", 80, haproxysock.ServerOptions{})),
		b(haproxysock.AddBackend("be_x", "p", haproxysock.BackendOptions{})),
	}
	res, err := c.Run(context.Background(), cmds...)
	var ce *haproxysock.CommandError
	if !errors.As(err, &ce) || ce.Command != cmds[1].String() || ce.Reply != "entry not found." {
		t.Fatalf("Run error = %v, want the CommandError of command 2", err)
	}
	got := make([]string, len(res))
	for i, r := range res {
		got[i] = fmt.Sprintf("%s | %q | err=%v unsupported=%v", r.Command, r.Reply, r.Err != nil, errors.Is(r.Err, haproxysock.ErrUnsupported))
	}
	want := []string{
		`set map /m k a\ b | "" | err=false unsupported=false`,
		`set map /m missing x | "entry not found." | err=true unsupported=false`,
		`add server be/s 127.0.0.1:80 | "New server registered." | err=false unsupported=false`,
		`add backend be_x from p | "Unknown command: 'add', but maybe one of the following ones is a better match:\n  add map …" | err=true unsupported=true`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"set", "map", "/m", "k", "a b"}, fake.received()[0]); diff != "" {
		t.Errorf("the fake read (-want +got):\n%s", diff)
	}
}

func TestRunSplitsAPayloadLargerThanBufSize(t *testing.T) {
	const bufSize = 1024
	fake := &fakeCLI{answer: mapAnswers, maxLine: bufSize}
	path := fakeServer(t, fake.serve)
	c := &haproxysock.Client{Path: path, Timeout: 2 * time.Second, BufSize: bufSize}
	var entries []haproxysock.MapEntry
	for i := range 500 {
		entries = append(entries, haproxysock.MapEntry{Key: fmt.Sprintf("h%05d.example.test", i), Value: "be_app"})
	}
	cmd := mustBuild(t)(haproxysock.AddMapPayload("/m", entries))
	res, err := c.Run(context.Background(), cmd)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 || res[0].Err != nil {
		t.Fatalf("results: %+v", res)
	}
	var got []string
	calls := fake.received()
	for _, words := range calls {
		if len(words) < 3 || words[0] != "add" || words[2] != "/m" {
			t.Fatalf("unexpected command %q", words)
		}
		got = append(got, words[3:]...)
		// Each part (line, entries, final empty line) fits in 3/4 of bufsize.
		if n := len("add map /m <<\n") + len(strings.Join(words[3:], "\n")) + 2; n > bufSize*3/4 {
			t.Errorf("part of %d bytes exceeds %d", n, bufSize*3/4)
		}
	}
	if len(calls) < 2 {
		t.Errorf("payload sent as %d command(s), want it split", len(calls))
	}
	if len(got) != len(entries) {
		t.Fatalf("%d entries arrived, want %d", len(got), len(entries))
	}
	for i, e := range entries {
		if got[i] != e.Key+" "+e.Value {
			t.Fatalf("entry %d = %q, want %q", i, got[i], e.Key+" "+e.Value)
		}
	}
}

func TestRunRefusesACommandTooLongForBufSizeBeforeSending(t *testing.T) {
	c := &haproxysock.Client{Path: "/nonexistent/socket", BufSize: 1024}
	big := mustBuild(t)(haproxysock.SetMap("/m", "k", strings.Repeat("v", 2000)))
	if _, err := c.Run(context.Background(), big); !errors.Is(err, haproxysock.ErrTooLong) {
		t.Fatalf("Run = %v, want ErrTooLong", err)
	}
	pem := mustBuild(t)(haproxysock.SetSSLCert("/c.pem", []byte(strings.Repeat("A\n", 600))))
	if _, err := c.Run(context.Background(), pem); !errors.Is(err, haproxysock.ErrTooLong) {
		t.Fatalf("Run = %v, want ErrTooLong for an unsplittable payload", err)
	}
}

// silent accepts a connection, reads everything and never answers.
func silent(c net.Conn) { _, _ = io.Copy(io.Discard, c) }

func TestRunTimesOutOnASocketThatNeverAnswers(t *testing.T) {
	path := fakeServer(t, silent)
	c := &haproxysock.Client{Path: path, Timeout: 100 * time.Millisecond}
	cmd := mustBuild(t)(haproxysock.SetMap("/m", "k", "v"))
	res, err := c.Run(context.Background(), cmd)
	if !isTimeout(err) {
		t.Fatalf("Run = %v, want a timeout", err)
	}
	if !errors.Is(res[0].Err, haproxysock.ErrNotRun) {
		t.Errorf("result error = %v, want ErrNotRun", res[0].Err)
	}
}

func TestRunStopsWhenTheContextEnds(t *testing.T) {
	path := fakeServer(t, silent)
	c := &haproxysock.Client{Path: path, Timeout: time.Minute}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := c.Run(ctx, haproxysock.ShowInfo())
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Run = %v, want context.DeadlineExceeded", err)
	}
}

func TestRunReportsAConnectionClosedBeforeEveryAnswer(t *testing.T) {
	// Answers the prompt, the severity switch and one command, then closes
	// (as HAProxy 3.2 does after a line longer than bufsize).
	path := fakeServer(t, func(c net.Conn) {
		buf := make([]byte, 4096)
		_, _ = c.Read(buf)
		_, _ = io.WriteString(c, "\n> \n> \n> ")
	})
	c := &haproxysock.Client{Path: path, Timeout: time.Second}
	b := mustBuild(t)
	res, err := c.Run(context.Background(), b(haproxysock.SetMap("/m", "a", "1")), b(haproxysock.SetMap("/m", "b", "2")))
	if !errors.Is(err, haproxysock.ErrProtocol) {
		t.Fatalf("Run = %v, want ErrProtocol", err)
	}
	if res[0].Err != nil {
		t.Errorf("first command: %v, want success", res[0].Err)
	}
	if !errors.Is(res[1].Err, haproxysock.ErrNotRun) {
		t.Errorf("second command: %v, want ErrNotRun", res[1].Err)
	}
}

func TestRunFailsFastOnAMissingSocket(t *testing.T) {
	c := &haproxysock.Client{Path: shortDir(t) + "/none.sock"}
	_, err := c.Run(context.Background(), haproxysock.ShowInfo())
	if err == nil || !strings.Contains(err.Error(), "dial") {
		t.Fatalf("Run = %v, want a dial error", err)
	}
}

func TestRunRetriesARefusedConnection(t *testing.T) {
	// A unix socket file without a listener refuses connections, like
	// HAProxy 3.0's master right after a reload.
	dir := shortDir(t)
	path := dir + "/s.sock"
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	ln.Close()
	fake := &fakeCLI{answer: mapAnswers}
	done := make(chan struct{})
	go func() {
		defer close(done)
		time.Sleep(50 * time.Millisecond)
		_ = removeFile(path)
		ln2, err := net.Listen("unix", path)
		if err != nil {
			t.Error(err)
			return
		}
		defer ln2.Close()
		conn, err := ln2.Accept()
		if err != nil {
			return
		}
		defer conn.Close()
		fake.serve(conn)
	}()
	c := &haproxysock.Client{Path: path, Timeout: 2 * time.Second}
	if _, err := c.Run(context.Background(), haproxysock.ShowBackend()); err != nil {
		t.Fatalf("Run = %v, want success after retrying", err)
	}
	<-done
}
