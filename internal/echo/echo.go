package echo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"
)

// Servers are tiny HTTP servers a demo or a benchmark routes to. Each
// answers every request with 200, header "X-Echo: <addr>" and the body
// "echo <addr> <method> <host><path>\n".
type Servers struct {
	servers   []*http.Server
	listeners []string // the servers' addresses
	wg        sync.WaitGroup
}

// Start listens on every address and serves until [Servers.Close].
func Start(addrs []string) (*Servers, error) {
	e := &Servers{}
	for _, addr := range addrs {
		l, err := net.Listen("tcp", addr)
		if err != nil {
			e.Close()
			return nil, fmt.Errorf("echo server: %w", err)
		}
		name := l.Addr().String()
		e.listeners = append(e.listeners, name)
		srv := &http.Server{
			Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.Copy(io.Discard, r.Body)
				w.Header().Set("X-Echo", name)
				w.Header().Set("Content-Type", "text/plain; charset=utf-8")
				_, _ = fmt.Fprintf(w, "echo %s %s %s%s\n", name, r.Method, r.Host, r.URL.Path)
			}),
			ReadHeaderTimeout: 5 * time.Second,
		}
		e.servers = append(e.servers, srv)
		e.wg.Go(func() {
			if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
				_ = err // the listener closed under it; nothing to report to
			}
		})
	}
	return e, nil
}

// Close shuts the servers down (waiting up to 2 s for requests in flight)
// and waits for them.
func (e *Servers) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	for _, s := range e.servers {
		if err := s.Shutdown(ctx); err != nil {
			_ = s.Close()
		}
	}
	e.wg.Wait()
}

// Addrs returns the addresses the servers listen on; nil for nil Servers.
func (e *Servers) Addrs() []string {
	if e == nil {
		return nil
	}
	out := make([]string, len(e.listeners))
	copy(out, e.listeners)
	return out
}
