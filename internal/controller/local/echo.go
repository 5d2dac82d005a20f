package local

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

// echoServers are tiny HTTP servers a demo routes to. Each answers every
// request with 200, header "X-Echo: <addr>" and the body "echo <addr>
// <method> <host><path>\n".
type echoServers struct {
	servers   []*http.Server
	listeners []string // the servers' addresses
	wg        sync.WaitGroup
}

// startEcho listens on every address and serves until close.
func startEcho(addrs []string) (*echoServers, error) {
	e := &echoServers{}
	for _, addr := range addrs {
		l, err := net.Listen("tcp", addr)
		if err != nil {
			e.close()
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

func (e *echoServers) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	for _, s := range e.servers {
		if err := s.Shutdown(ctx); err != nil {
			_ = s.Close()
		}
	}
	e.wg.Wait()
}

// addrs returns the addresses the servers listen on.
func (e *echoServers) addrs() []string {
	if e == nil {
		return nil
	}
	out := make([]string, len(e.listeners))
	copy(out, e.listeners)
	return out
}
