package haproxytest

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
	"time"
)

// getTimeout bounds one [Get].
const getTimeout = 5 * time.Second

// Echo is an HTTP server on 127.0.0.1 for traffic tests. It answers every
// request with status 200, header "X-Echo: <Name>" and body "<Name>\n".
type Echo struct {
	Name string
	Addr string // "127.0.0.1:<Port>"
	Port int
}

// StartEcho starts an [Echo] named name on a free 127.0.0.1 port and closes
// it in t.Cleanup.
func StartEcho(t testing.TB, name string) *Echo {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("start echo %s: %v", name, err)
	}
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			w.Header().Set("X-Echo", name)
			w.Header().Set("Content-Type", "text/plain")
			_, _ = io.WriteString(w, name+"\n")
		}),
		ReadHeaderTimeout: 5 * time.Second,
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("echo %s: %v", name, err)
		}
	}()
	t.Cleanup(func() {
		_ = srv.Close()
		<-done
	})
	port := l.Addr().(*net.TCPAddr).Port
	return &Echo{Name: name, Addr: fmt.Sprintf("127.0.0.1:%d", port), Port: port}
}

// Get sends an HTTP GET to url with the given Host header (none if empty),
// without keep-alive and with a 5 s timeout, and returns the status and
// body. It fails the test on a transport error.
func Get(t testing.TB, url, host string) (status int, body string) {
	t.Helper()
	status, body, err := TryGet(url, host)
	if err != nil {
		t.Fatalf("GET %s (Host %q): %v", url, host, err)
	}
	return status, body
}

// TryGet is [Get] returning the error instead of failing the test.
func TryGet(url, host string) (status int, body string, err error) {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return 0, "", err
	}
	if host != "" {
		req.Host = host
	}
	c := &http.Client{
		Timeout:   getTimeout,
		Transport: &http.Transport{DisableKeepAlives: true, Proxy: nil},
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, string(b), fmt.Errorf("read body: %w", err)
	}
	return resp.StatusCode, string(b), nil
}
