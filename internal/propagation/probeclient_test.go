package propagation_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/haptic-io/haptic/internal/propagation"
	"github.com/haptic-io/haptic/internal/testenv/syncbuf"
)

// routeServer answers 404 for a host until ready(host), then 200; the
// second request of every host gets a 503.
type routeServer struct {
	mu       sync.Mutex
	ready    map[string]bool
	requests map[string]int
}

func (s *routeServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.requests[r.Host]++
	n, ready := s.requests[r.Host], s.ready[r.Host]
	s.mu.Unlock()
	switch {
	case n == 2:
		http.Error(w, "no server available", http.StatusServiceUnavailable)
	case ready:
		_, _ = io.WriteString(w, "ok")
	default:
		http.NotFound(w, r)
	}
}

func (s *routeServer) setReady(host string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ready[host] = true
}

func (s *routeServer) count(host string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests[host]
}

// probeEvent is the probe client's JSON line, as a reader outside the
// package sees it.
type probeEvent struct {
	Event      string `json:"event"`
	Host       string `json:"host"`
	AtUnixNano int64  `json:"at_unix_nano"`
	Requests   int    `json:"requests"`
	Unexpected []struct {
		AtUnixNano int64  `json:"at_unix_nano"`
		Status     int    `json:"status"`
		Detail     string `json:"detail"`
	} `json:"unexpected"`
}

// probeClient runs propagation.RunProbeClient on pipes.
type probeClient struct {
	t     *testing.T
	stdin *io.PipeWriter
	out   *bufio.Scanner
	done  chan error
}

func startProbeClient(t *testing.T, cfg propagation.ProbeClientConfig) *probeClient {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	c := &probeClient{t: t, stdin: inW, out: bufio.NewScanner(outR), done: make(chan error, 1)}
	go func() {
		err := propagation.RunProbeClient(ctx, cfg, inR, outW)
		_ = outW.CloseWithError(io.EOF)
		c.done <- err
	}()
	t.Cleanup(func() {
		cancel()
		_ = inW.Close()
		_ = outR.Close()
	})
	return c
}

func (c *probeClient) send(host string) {
	c.t.Helper()
	if _, err := io.WriteString(c.stdin, host+"\n"); err != nil {
		c.t.Fatal(err)
	}
}

// next reads the next line; a hang is caught by the test's timeout.
func (c *probeClient) next() probeEvent {
	c.t.Helper()
	if !c.out.Scan() {
		c.t.Fatalf("probe client output ended: %v", c.out.Err())
	}
	var ev probeEvent
	if err := json.Unmarshal(c.out.Bytes(), &ev); err != nil {
		c.t.Fatalf("line %q: %v", c.out.Text(), err)
	}
	return ev
}

func TestProbeClientReportsTheFirst200AndTheUnexpectedAnswersBefore(t *testing.T) {
	srv := &routeServer{ready: map[string]bool{}, requests: map[string]int{}}
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	c := startProbeClient(t, propagation.ProbeClientConfig{URL: ts.URL})

	for _, host := range []string{"a.test", "b.test"} {
		c.send(host)
		if ev := c.next(); ev.Event != "polling" || ev.Host != host {
			t.Fatalf("first line %+v, want polling for %s", ev, host)
		}
		// The route exists only now, after polling began; the 503 (the
		// second request) may come before or after this.
		before := time.Now()
		srv.setReady(host)
		ev := c.next()
		after := time.Now()
		if ev.Event != "ok" || ev.Host != host {
			t.Fatalf("result %+v, want ok for %s", ev, host)
		}
		if at := time.Unix(0, ev.AtUnixNano); at.Before(before) || at.After(after) {
			t.Errorf("200 at %v, not between the route's creation %v and the result line %v", at, before, after)
		}
		if got := srv.count(host); ev.Requests != got || got < 3 {
			t.Errorf("client counted %d requests, server %d, want the same and at least 3", ev.Requests, got)
		}
		if len(ev.Unexpected) != 1 {
			t.Fatalf("unexpected answers %+v, want the one 503", ev.Unexpected)
		}
		u := ev.Unexpected[0]
		if diff := cmp.Diff([2]any{http.StatusServiceUnavailable, "no server available"}, [2]any{u.Status, u.Detail}); diff != "" {
			t.Errorf("unexpected answer (-want +got):\n%s", diff)
		}
		if at, ok := time.Unix(0, u.AtUnixNano), time.Unix(0, ev.AtUnixNano); !at.Before(ok) {
			t.Errorf("the 503 at %v, not before the 200 at %v", at, ok)
		}
	}
	_ = c.stdin.Close()
	if err := <-c.done; err != nil {
		t.Errorf("after stdin ended: %v", err)
	}
}

func TestProbeClientReportsTransportErrorsAndGivesUpAfterItsLimit(t *testing.T) {
	ts := httptest.NewServer(http.NotFoundHandler())
	url := ts.URL
	ts.Close() // nothing listens there any more: every request fails
	c := startProbeClient(t, propagation.ProbeClientConfig{URL: url, Limit: 20 * time.Millisecond})
	c.send("gone.test")
	if ev := c.next(); ev.Event != "polling" {
		t.Fatalf("first line %+v, want polling", ev)
	}
	ev := c.next()
	if ev.Event != "timeout" || ev.Host != "gone.test" || ev.AtUnixNano != 0 {
		t.Fatalf("result %+v, want a timeout without a time", ev)
	}
	if ev.Requests < 2 || len(ev.Unexpected) != ev.Requests {
		t.Fatalf("%d requests, %d unexpected answers: want every request (at least 2) reported", ev.Requests, len(ev.Unexpected))
	}
	for _, u := range ev.Unexpected {
		if u.Status != 0 || !strings.Contains(u.Detail, "connection refused") {
			t.Errorf("answer %+v, want a transport error (status 0, connection refused)", u)
		}
	}
	_ = c.stdin.Close()
	if err := <-c.done; err != nil {
		t.Errorf("after stdin ended: %v", err)
	}
}

func TestProbeClientRejectsAHostThatCannotBeAHostHeader(t *testing.T) {
	c := startProbeClient(t, propagation.ProbeClientConfig{URL: "http://127.0.0.1:1"})
	go func() { _, _ = io.WriteString(c.stdin, "two words\n") }()
	err := <-c.done
	if err == nil || !strings.Contains(err.Error(), `"two words"`) {
		t.Errorf("error %v, want one naming the host", err)
	}
}

func TestProbeClientStopsWhenItsContextEnds(t *testing.T) {
	ts := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(ts.Close)
	inR, inW := io.Pipe()
	t.Cleanup(func() { _ = inW.Close() })
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	var out syncbuf.Buffer
	go func() { done <- propagation.RunProbeClient(ctx, propagation.ProbeClientConfig{URL: ts.URL}, inR, &out) }()
	if _, err := io.WriteString(inW, "never.test\n"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(out.String(), `"polling"`) {
		if time.Now().After(deadline) {
			t.Fatalf("no polling line within 10s: %q", out.String())
		}
		time.Sleep(time.Millisecond)
	}
	cancel()
	if err := <-done; err == nil || !strings.Contains(err.Error(), context.Canceled.Error()) {
		t.Errorf("error %v, want context canceled", err)
	}
}

func TestProbeClientRequiresAURL(t *testing.T) {
	err := propagation.RunProbeClient(context.Background(), propagation.ProbeClientConfig{}, strings.NewReader("a.test\n"), io.Discard)
	if err == nil || !strings.Contains(err.Error(), "URL is required") {
		t.Errorf("error %v, want URL is required", err)
	}
}
