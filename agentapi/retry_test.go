package agentapi_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/haptic-io/haptic/agentapi"
)

// closedPort returns a 127.0.0.1 address nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	return addr
}

// countingClient returns an HTTP client whose dials are counted.
func countingClient(dials *atomic.Int32) *http.Client {
	d := &net.Dialer{Timeout: 5 * time.Second}
	return &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			dials.Add(1)
			return d.DialContext(ctx, network, addr)
		},
	}}
}

func TestConnectionRefusedIsRetriedABoundedNumberOfTimes(t *testing.T) {
	addr := closedPort(t)
	for _, tc := range []struct {
		name      string
		retries   int
		wantDials int32
	}{
		{"default retries", 0, 1 + agentapi.DefaultRetries},
		{"three retries", 3, 4},
		{"no retries", -1, 1},
	} {
		for _, call := range []string{"state", "apply"} {
			t.Run(tc.name+"/"+call, func(t *testing.T) {
				var dials atomic.Int32
				c := &agentapi.Client{BaseURL: "http://" + addr, Token: testToken, HTTPClient: countingClient(&dials),
					Retries: tc.retries, RetryBackoff: time.Millisecond}
				var err error
				if call == "state" {
					_, err = c.State(context.Background())
				} else {
					_, err = c.Apply(context.Background(), validRequest())
				}
				if !errors.Is(err, syscall.ECONNREFUSED) {
					t.Fatalf("error = %v, want ECONNREFUSED", err)
				}
				if got := dials.Load(); got != tc.wantDials {
					t.Errorf("dials = %d, want %d", got, tc.wantDials)
				}
			})
		}
	}
}

func TestRetryStopsWhenTheContextEnds(t *testing.T) {
	addr := closedPort(t)
	var dials atomic.Int32
	ctx, cancel := context.WithCancel(context.Background())
	d := &net.Dialer{Timeout: 5 * time.Second}
	hc := &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			dials.Add(1)
			conn, err := d.DialContext(ctx, network, addr)
			cancel() // the caller gives up while the first attempt fails
			return conn, err
		},
	}}
	c := &agentapi.Client{BaseURL: "http://" + addr, HTTPClient: hc, Retries: 1000, RetryBackoff: time.Millisecond}
	_, err := c.State(ctx)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error = %v, want context.Canceled", err)
	}
	if dials.Load() != 1 {
		t.Errorf("dials = %d, want 1", dials.Load())
	}
}

// resetServer accepts connections on 127.0.0.1 and resets each one as
// soon as the first request bytes arrive. It counts the connections.
type resetServer struct {
	ln    net.Listener
	conns atomic.Int32
	wg    sync.WaitGroup
}

func newResetServer(t *testing.T) *resetServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &resetServer{ln: ln}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.conns.Add(1)
			buf := make([]byte, 1)
			_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
			_, _ = c.Read(buf)
			_ = c.(*net.TCPConn).SetLinger(0)
			_ = c.Close()
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		s.wg.Wait()
	})
	return s
}

func TestConnectionResetIsRetriedForStateOnly(t *testing.T) {
	for _, tc := range []struct {
		call      string
		wantConns int32
	}{
		{"state", 3},
		{"apply", 1},
	} {
		t.Run(tc.call, func(t *testing.T) {
			s := newResetServer(t)
			c := &agentapi.Client{BaseURL: "http://" + s.ln.Addr().String(), Retries: 2, RetryBackoff: time.Millisecond,
				HTTPClient: &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}}
			var err error
			if tc.call == "state" {
				_, err = c.State(context.Background())
			} else {
				_, err = c.Apply(context.Background(), validRequest())
			}
			if err == nil {
				t.Fatal("call against a resetting server succeeded")
			}
			if got := s.conns.Load(); got != tc.wantConns {
				t.Errorf("connections = %d, want %d (error %v)", got, tc.wantConns, err)
			}
		})
	}
}
