package haproxysock_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/haptic-io/haptic/haproxysock"
)

// countingServer serves fake on a unix socket and counts its connections.
func countingServer(t *testing.T, fake *fakeCLI) (string, *atomic.Int32) {
	t.Helper()
	var conns atomic.Int32
	path := fakeServer(t, func(c net.Conn) {
		conns.Add(1)
		fake.serve(c)
	})
	return path, &conns
}

// summary renders results as "command | reply | err" lines for cmp.Diff.
func summary(res []haproxysock.Result) []string {
	out := make([]string, len(res))
	for i, r := range res {
		out[i] = fmt.Sprintf("%s | %q | err=%v", r.Command, r.Reply, r.Err != nil)
	}
	return out
}

func TestSessionRunsSeveralBatchesOnOneConnection(t *testing.T) {
	fake := &fakeCLI{answer: mapAnswers}
	path, conns := countingServer(t, fake)
	c := &haproxysock.Client{Path: path, Timeout: 2 * time.Second}
	b := mustBuild(t)
	s := c.Session()
	defer s.Close()

	batches := [][]haproxysock.Command{
		{b(haproxysock.AddServer("be", "s1", "127.0.0.1", 80, haproxysock.ServerOptions{}))},
		// A refused command in the middle: the others still run, and the
		// session stays usable.
		{b(haproxysock.SetMap("/m", "k", "a;b")), b(haproxysock.SetMap("/m", "missing", "x")), b(haproxysock.SetMap("/m", "k2", "v"))},
		{b(haproxysock.AddServer("be", "s2", "127.0.0.1", 81, haproxysock.ServerOptions{}))},
	}
	var got []string
	for i, batch := range batches {
		res, err := s.Run(context.Background(), batch...)
		if i == 1 {
			var ce *haproxysock.CommandError
			if !errors.As(err, &ce) || ce.Reply != "entry not found." || !strings.HasPrefix(err.Error(), "command 2 of 3:") {
				t.Fatalf("batch 2: Run = %v, want command 2's CommandError", err)
			}
		} else if err != nil {
			t.Fatalf("batch %d: %v", i+1, err)
		}
		got = append(got, summary(res)...)
	}
	want := []string{
		`add server be/s1 127.0.0.1:80 | "New server registered." | err=false`,
		`set map /m k a\;b | "" | err=false`,
		`set map /m missing x | "entry not found." | err=true`,
		`set map /m k2 v | "" | err=false`,
		`add server be/s2 127.0.0.1:81 | "New server registered." | err=false`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}
	// The fake toggles the prompt like 3.0: a second "prompt" would have
	// switched it off and ended the conversation.
	if n := conns.Load(); n != 1 {
		t.Errorf("%d connections, want 1", n)
	}
	if n := len(fake.received()); n != 5 {
		t.Errorf("the fake received %d commands, want 5", n)
	}
}

func TestSessionDoesNotDialUntilItsFirstRun(t *testing.T) {
	fake := &fakeCLI{answer: mapAnswers}
	path, conns := countingServer(t, fake)
	c := &haproxysock.Client{Path: path, Timeout: 2 * time.Second}
	s := c.Session()
	if res, err := s.Run(context.Background()); err != nil || len(res) != 0 {
		t.Fatalf("empty Run = %v, %v", res, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close = %v", err)
	}
	if n := conns.Load(); n != 0 {
		t.Errorf("%d connections, want none", n)
	}
}

func TestSessionRefusesRunsAfterClose(t *testing.T) {
	fake := &fakeCLI{answer: mapAnswers}
	path, conns := countingServer(t, fake)
	c := &haproxysock.Client{Path: path, Timeout: 2 * time.Second}
	cmd := mustBuild(t)(haproxysock.SetMap("/m", "k", "v"))
	s := c.Session()
	if _, err := s.Run(context.Background(), cmd); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	res, err := s.Run(context.Background(), cmd)
	if !errors.Is(err, haproxysock.ErrSessionClosed) {
		t.Fatalf("Run after Close = %v, want ErrSessionClosed", err)
	}
	if len(res) != 1 || !errors.Is(res[0].Err, haproxysock.ErrNotRun) {
		t.Errorf("results %+v, want one ErrNotRun", res)
	}
	if n, m := conns.Load(), len(fake.received()); n != 1 || m != 1 {
		t.Errorf("%d connections and %d commands, want 1 and 1", n, m)
	}
}

func TestSessionEndsAtATransportFailureAndSendsNothingMore(t *testing.T) {
	// The fake closes the connection when it reads "clear map /boom", as
	// HAProxy does after a line longer than bufsize.
	var mu sync.Mutex
	var cur net.Conn
	fake := &fakeCLI{answer: func(words, payload []string) (string, int) {
		if strings.Join(words, " ") == "clear map /boom" {
			mu.Lock()
			_ = cur.Close()
			mu.Unlock()
			return "", -1
		}
		return mapAnswers(words, payload)
	}}
	var conns atomic.Int32
	path := fakeServer(t, func(c net.Conn) {
		conns.Add(1)
		mu.Lock()
		cur = c
		mu.Unlock()
		fake.serve(c)
	})
	c := &haproxysock.Client{Path: path, Timeout: 2 * time.Second}
	b := mustBuild(t)
	s := c.Session()
	defer s.Close()
	if _, err := s.Run(context.Background(), b(haproxysock.SetMap("/m", "k", "v"))); err != nil {
		t.Fatal(err)
	}
	res, err := s.Run(context.Background(), b(haproxysock.ClearMap("/boom")), b(haproxysock.SetMap("/m", "b", "2")))
	if !errors.Is(err, haproxysock.ErrProtocol) {
		t.Fatalf("Run = %v, want ErrProtocol", err)
	}
	if !errors.Is(res[0].Err, haproxysock.ErrNotRun) || !errors.Is(res[1].Err, haproxysock.ErrNotRun) {
		t.Fatalf("results %v, want both unanswered", summary(res))
	}
	before := len(fake.received())
	res, err = s.Run(context.Background(), b(haproxysock.SetMap("/m", "c", "3")))
	if !errors.Is(err, haproxysock.ErrSessionClosed) || !errors.Is(err, haproxysock.ErrProtocol) {
		t.Fatalf("Run after the failure = %v, want ErrSessionClosed naming the cause", err)
	}
	if !errors.Is(res[0].Err, haproxysock.ErrNotRun) {
		t.Errorf("result %v, want ErrNotRun", res[0].Err)
	}
	if n, m := conns.Load(), len(fake.received()); n != 1 || m != before {
		t.Errorf("%d connections, %d commands (was %d): the dead session sent something", n, m, before)
	}
}

func TestSessionEndsWhenTheContextEndsDuringARun(t *testing.T) {
	path := fakeServer(t, silent)
	c := &haproxysock.Client{Path: path, Timeout: time.Minute}
	s := c.Session()
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := s.Run(ctx, haproxysock.ShowInfo()); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Run = %v, want context.DeadlineExceeded", err)
	}
	if _, err := s.Run(context.Background(), haproxysock.ShowInfo()); !errors.Is(err, haproxysock.ErrSessionClosed) {
		t.Fatalf("Run after the timeout = %v, want ErrSessionClosed", err)
	}
}

func TestSessionStaysUsableAfterACommandTooLong(t *testing.T) {
	fake := &fakeCLI{answer: mapAnswers}
	path, conns := countingServer(t, fake)
	c := &haproxysock.Client{Path: path, Timeout: 2 * time.Second, BufSize: 1024}
	b := mustBuild(t)
	s := c.Session()
	defer s.Close()
	if _, err := s.Run(context.Background(), b(haproxysock.SetMap("/m", "k", "v"))); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Run(context.Background(), b(haproxysock.SetMap("/m", "k", strings.Repeat("v", 2000)))); !errors.Is(err, haproxysock.ErrTooLong) {
		t.Fatalf("Run = %v, want ErrTooLong", err)
	}
	if _, err := s.Run(context.Background(), b(haproxysock.SetMap("/m", "k", "w"))); err != nil {
		t.Fatalf("Run after a refused plan = %v", err)
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("%d connections, want 1", n)
	}
}

func TestSessionWritesALargeBatchWhileReadingItsAnswers(t *testing.T) {
	// 4,000 entries split into parts of 3/4 of 1 KiB: far more than one
	// write, so the answers arrive while the batch is still being sent.
	const bufSize = 1024
	fake := &fakeCLI{answer: mapAnswers, maxLine: bufSize}
	path, conns := countingServer(t, fake)
	c := &haproxysock.Client{Path: path, Timeout: 2 * time.Second, BufSize: bufSize}
	b := mustBuild(t)
	s := c.Session()
	defer s.Close()
	entries := make([]haproxysock.MapEntry, 4000)
	for i := range entries {
		entries[i] = haproxysock.MapEntry{Key: fmt.Sprintf("h%05d.example.test", i), Value: "be_app"}
	}
	for round := range 2 {
		res, err := s.Run(context.Background(), b(haproxysock.AddMapPayload("/m", entries)), b(haproxysock.SetMap("/m", "missing", "x")))
		if len(res) != 2 || res[0].Err != nil || res[1].Reply != "entry not found." {
			t.Fatalf("round %d: Run = %v, results %v", round+1, err, summary(res))
		}
	}
	got := 0
	for _, words := range fake.received() {
		if words[0] == "add" {
			got += len(words) - 3
		}
	}
	if got != 2*len(entries) {
		t.Errorf("%d entries arrived, want %d", got, 2*len(entries))
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("%d connections, want 1", n)
	}
}

func TestSessionSerialisesConcurrentRuns(t *testing.T) {
	fake := &fakeCLI{answer: mapAnswers}
	path, conns := countingServer(t, fake)
	c := &haproxysock.Client{Path: path, Timeout: 2 * time.Second}
	b := mustBuild(t)
	s := c.Session()
	defer s.Close()
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for g := range 2 {
		wg.Go(func() {
			for i := range 20 {
				res, err := s.Run(context.Background(), b(haproxysock.AddServer("be", fmt.Sprintf("g%d-%d", g, i), "127.0.0.1", 80, haproxysock.ServerOptions{})))
				if err == nil && res[0].Reply != "New server registered." {
					err = fmt.Errorf("reply %q", res[0].Reply)
				}
				if err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("%d connections, want 1", n)
	}
}
