package agent_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/haptic-io/haptic/agentapi"
	"github.com/haptic-io/haptic/deployplan"
	"github.com/haptic-io/haptic/internal/agent"
	"github.com/haptic-io/haptic/internal/haproxytest"
	"github.com/haptic-io/haptic/renderplan"
)

// slowServer answers "<name>\n"; requests to /slow are answered only once
// release is closed (or after 20 s), so they stay in flight as long as the
// test wants.
type slowServer struct {
	echo    *haproxytest.Echo // Name and Port, for server()
	release chan struct{}
	started chan struct{}
	once    sync.Once
}

func startSlow(t testing.TB, name string) *slowServer {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &slowServer{release: make(chan struct{}), started: make(chan struct{}, 16)}
	srv := &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/slow" {
			_, _ = io.WriteString(w, name+"\n")
			return
		}
		s.started <- struct{}{}
		select {
		case <-s.release:
		case <-time.After(20 * time.Second):
		}
		_, _ = io.WriteString(w, name+"\n")
	})}
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("slow server: %v", err)
		}
	})
	t.Cleanup(func() {
		s.Release()
		_ = srv.Close()
		wg.Wait()
	})
	port := l.Addr().(*net.TCPAddr).Port
	s.echo = &haproxytest.Echo{Name: name, Addr: l.Addr().String(), Port: port}
	return s
}

func (s *slowServer) Release() { s.once.Do(func() { close(s.release) }) }

// inFlight sends GET /slow to host until one reaches the slow server
// (other servers of the backend answer at once) and returns a channel
// that gets that request's outcome.
func (s *slowServer) inFlight(t testing.TB, base, host string) <-chan error {
	t.Helper()
	for range 8 {
		done := make(chan error, 1)
		other := make(chan struct{})
		go func() {
			code, body, err := haproxytest.TryGet(base+"slow", host)
			if err == nil && code == 200 && body != s.echo.Name+"\n" {
				close(other)
				return
			}
			if err == nil && code != 200 {
				err = errors.New("in-flight request answered " + body)
			}
			done <- err
		}()
		select {
		case <-s.started:
			return done
		case <-other:
		case err := <-done:
			t.Fatalf("slow request: %v", err)
		case <-time.After(5 * time.Second):
			t.Fatal("the slow request did not reach the server")
		}
	}
	t.Fatal("no request reached the slow server")
	return nil
}

// TestDeletesOfBusyServersAndBackendsAreDeferredThenDone removes, on 3.4,
// a server and a whole route while each has a request in flight: the
// apply ACKs at once with the deletes deferred (traffic already moved
// away), the state lists them as pending, and once the requests end the
// background loop deletes them.
func TestDeletesOfBusyServersAndBackendsAreDeferredThenDone(t *testing.T) {
	s := startSite(t, "3.4")
	slowAPI, slowShop := startSlow(t, "api-slow"), startSlow(t, "shop-slow")
	api2 := haproxytest.StartEcho(t, "api-2")
	a := s.newAgent(t, nil)
	w := world{routes: []route{
		{"api.example.com", "be_api", []renderplan.Server{server("api-slow", slowAPI.echo), server("api-2", api2)}},
		{"shop.example.com", "be_shop", []renderplan.Server{server("shop-slow", slowShop.echo)}},
	}}
	prev := s.build(t, w)
	mustApply(t, a, fullRequest(prev, 1))
	apiDone := slowAPI.inFlight(t, s.url(), "api.example.com")
	shopDone := slowShop.inFlight(t, s.url(), "shop.example.com")

	w.routes = []route{{"api.example.com", "be_api", []renderplan.Server{server("api-2", api2)}}}
	next := s.build(t, w)
	req, d := diffRequest(t, s, prev, next, 2)
	if d.Verdict != deployplan.VerdictRuntime {
		t.Fatalf("verdict %s, want runtime:\n%s", d.Verdict, d)
	}
	start := time.Now()
	res := mustApply(t, a, req)
	t.Logf("apply with busy deletes took %v", time.Since(start))
	deferred := 0
	for _, r := range res.Ops {
		if strings.HasPrefix(r.Reply, "deferred") {
			deferred++
		}
	}
	if deferred != 3 { // server api-slow, server shop-slow, backend be_shop
		t.Errorf("%d deferred ops, want 3: %+v", deferred, res.Ops)
	}
	st, _ := a.State(context.Background())
	want := []agentapi.PendingDelete{{Backend: "be_api", Server: "api-slow"}, {Backend: "be_shop"}, {Backend: "be_shop", Server: "shop-slow"}}
	if len(st.PendingDeletes) != 3 {
		t.Fatalf("pending deletes %v, want %v", st.PendingDeletes, want)
	}
	for range 4 {
		if code, body := s.get(t, "api.example.com"); code != 200 || body != "api-2\n" {
			t.Fatalf("traffic still reaches a deleted server: %d %q", code, body)
		}
	}
	if code, _ := s.get(t, "shop.example.com"); code != 404 {
		t.Errorf("removed route answered %d, want 404", code)
	}
	slowAPI.Release()
	slowShop.Release()
	for _, ch := range []<-chan error{apiDone, shopDone} {
		if err := <-ch; err != nil {
			t.Errorf("in-flight request: %v", err)
		}
	}
	waitFor(t, 10*time.Second, "the deferred deletes", func() bool {
		st, err := a.State(context.Background())
		return err == nil && len(st.PendingDeletes) == 0
	})
	if out := s.cmd(t, "show servers state"); strings.Contains(out, "api-slow") || strings.Contains(out, "shop-slow") {
		t.Errorf("deleted servers still listed:\n%s", out)
	}
	if out := s.cmd(t, "show backend"); strings.Contains(out, "be_shop") {
		t.Errorf("deleted backend still listed:\n%s", out)
	}
}

// TestADeferredDeleteIsDoneWhenItsRequestEnds: the first attempt of a
// deferred delete starts at once and waits on HAProxy for the object to
// become removable, so the delete completes when the request in flight
// ends, not a retry interval later (DeleteRetry is an hour here).
func TestADeferredDeleteIsDoneWhenItsRequestEnds(t *testing.T) {
	s := startSite(t, "3.4")
	slow := startSlow(t, "slow")
	a := s.newAgent(t, func(c *agent.Config) { c.DeleteRetry, c.RemovableWait = time.Hour, 20*time.Second })
	w := world{routes: []route{
		{"api.example.com", "be_api", []renderplan.Server{server("api", haproxytest.StartEcho(t, "api"))}},
		{"slow.example.com", "be_slow", []renderplan.Server{server("slow", slow.echo)}},
	}}
	prev := s.build(t, w)
	mustApply(t, a, fullRequest(prev, 1))
	done := slow.inFlight(t, s.url(), "slow.example.com")
	w.routes = w.routes[:1]
	req, _ := diffRequest(t, s, prev, s.build(t, w), 2)
	mustApply(t, a, req)
	if st, _ := a.State(context.Background()); len(st.PendingDeletes) == 0 {
		t.Fatal("the busy server's delete was not deferred")
	}
	slow.Release()
	if err := <-done; err != nil {
		t.Errorf("in-flight request: %v", err)
	}
	waitFor(t, 15*time.Second, "the deferred deletes, well before DeleteRetry", func() bool {
		st, err := a.State(context.Background())
		return err == nil && len(st.PendingDeletes) == 0
	})
}

// TestAFullDeleteQueueFallsBackToAReload: with room for one deferred
// delete, a second busy server makes the apply reload onto the new files,
// which never had either server.
func TestAFullDeleteQueueFallsBackToAReload(t *testing.T) {
	s := startSite(t, "3.4")
	slow1, slow2 := startSlow(t, "slow-1"), startSlow(t, "slow-2")
	keep := haproxytest.StartEcho(t, "keep")
	a := s.newAgent(t, func(c *agent.Config) { c.MaxPendingDeletes = 1 })
	w := world{routes: []route{
		{"one.example.com", "be_one", []renderplan.Server{server("slow-1", slow1.echo), server("keep", keep)}},
		{"two.example.com", "be_two", []renderplan.Server{server("slow-2", slow2.echo), server("keep", keep)}},
	}}
	prev := s.build(t, w)
	mustApply(t, a, fullRequest(prev, 1))
	done1 := slow1.inFlight(t, s.url(), "one.example.com")
	done2 := slow2.inFlight(t, s.url(), "two.example.com")
	w.routes[0].servers = w.routes[0].servers[1:]
	w.routes[1].servers = w.routes[1].servers[1:]
	next := s.build(t, w)
	req, _ := diffRequest(t, s, prev, next, 2)
	res := mustApply(t, a, req)
	if !res.Reload.Performed || !res.Reload.OK || !strings.Contains(res.Reload.Reason, "queue is full") {
		t.Errorf("reload %+v, want a fallback reload for the full queue", res.Reload)
	}
	st, _ := a.State(context.Background())
	if len(st.PendingDeletes) != 0 {
		t.Errorf("pending deletes %v after the reload, want none", st.PendingDeletes)
	}
	for _, host := range []string{"one.example.com", "two.example.com"} {
		if code, body := s.get(t, host); code != 200 || body != "keep\n" {
			t.Errorf("GET %s = %d %q, want keep", host, code, body)
		}
	}
	slow1.Release()
	slow2.Release()
	for _, ch := range []<-chan error{done1, done2} {
		if err := <-ch; err != nil {
			t.Errorf("in-flight request: %v", err)
		}
	}
}
