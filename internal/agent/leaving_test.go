package agent_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/haptic-io/haptic/deployplan"
	"github.com/haptic-io/haptic/haproxysock"
	"github.com/haptic-io/haptic/internal/haproxytest"
	"github.com/haptic-io/haptic/renderplan"
)

// TestLeavingWorkerServesAnIdleConnectionOnceFromTheServersItKnew pins
// down what a worker leaving after a reload does, on every series, and
// why nothing the agent could send it helps:
//
//   - Two keep-alive connections are idle on the worker when a reload
//     replaces it. With option idle-close-on-response it keeps them open
//     (it does not close them at soft-stop, which races a client writing
//     its next request) and stays listed as leaving.
//   - An endpoint is then replaced at runtime (pod-1 out, pod-2 in). The
//     leaving worker refuses the change routed to it through the master
//     CLI ("@!<pid> set server …": "Proxy is disabled."), so replaying
//     runtime ops to leaving workers cannot move their traffic.
//   - The first idle connection's next request is answered by the
//     leaving worker from the servers it knew: pod-1, which still serves,
//     with "Connection: close". A new connection reaches the new worker
//     and pod-2.
//   - pod-1 stops serving; the second idle connection's next request goes
//     to pod-1 all the same and fails (503). This is the reference's
//     residual: a removed endpoint must keep serving for as long as a
//     connection may stay idle on a leaving worker (timeout
//     http-keep-alive), which a preStop delay gives it.
func TestLeavingWorkerServesAnIdleConnectionOnceFromTheServersItKnew(t *testing.T) {
	haproxytest.ForEachSeries(t, func(t *testing.T, series string) {
		s := startSite(t, series)
		pod1 := startStoppableEcho(t, "pod-1")
		pod2 := haproxytest.StartEcho(t, "pod-2")
		a := s.newAgent(t, nil)
		const keep = "    option idle-close-on-response\n"
		w := world{extra: keep, routes: []route{
			{"api.example.com", "be_api", []renderplan.Server{server("pod-1", pod1.echo)}},
		}}
		gen1 := s.build(t, w)
		mustApply(t, a, fullRequest(gen1, 1))

		addr := fmt.Sprintf("127.0.0.1:%d", s.port)
		idle := []*keepAliveConn{dialKeepAlive(t, addr), dialKeepAlive(t, addr)}
		for i, c := range idle {
			if r := c.get("api.example.com"); r.err != nil || r.status != 200 || r.body != "pod-1\n" || r.close {
				t.Fatalf("idle connection %d, first request: %+v, want 200 from pod-1, kept alive", i, r)
			}
		}

		w.extra = keep + "    http-response set-header X-Gen 2\n"
		gen2 := s.build(t, w)
		req, d := diffRequest(t, s, gen1, gen2, 2)
		if d.Verdict != deployplan.VerdictReload {
			t.Fatalf("verdict %s, want reload", d.Verdict)
		}
		mustApply(t, a, req)
		master := &haproxysock.Master{Path: s.master}
		procs, err := master.ShowProc(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		leaving := procs.Leaving()
		if len(leaving) != 1 {
			t.Fatalf("leaving workers after the reload: %+v, want the one that holds the idle connections", procs)
		}
		old := leaving[0].PID

		w.routes[0].servers = []renderplan.Server{server("pod-2", pod2)}
		gen3 := s.build(t, w)
		req, d = diffRequest(t, s, gen2, gen3, 3)
		if d.Verdict != deployplan.VerdictRuntime {
			t.Fatalf("verdict %s, want runtime", d.Verdict)
		}
		mustApply(t, a, req)
		if reply := rawCmd(t, s.master, fmt.Sprintf("@!%d set server be_api/pod-1 state maint", old)); !strings.Contains(reply, "Proxy is disabled") {
			t.Errorf("leaving worker %d answers set server: %q, want \"Proxy is disabled.\"", old, strings.TrimSpace(reply))
		}

		if r := idle[0].get("api.example.com"); r.err != nil || r.status != 200 || r.body != "pod-1\n" || !r.close {
			t.Errorf("idle connection 0 after the runtime change: %+v, want 200 from pod-1 (the leaving worker's server) and Connection: close", r)
		}
		if st, body := s.get(t, "api.example.com"); st != 200 || body != "pod-2\n" {
			t.Errorf("a new connection: %d %q, want 200 from pod-2", st, body)
		}

		pod1.stop()
		if r := idle[1].get("api.example.com"); r.err != nil || r.status != http.StatusServiceUnavailable {
			t.Errorf("idle connection 1 after pod-1 stopped: %+v, want the leaving worker's 503", r)
		}
	})
}

// keepAliveConn is one HTTP/1.1 connection written by hand: no client
// library retries or reconnects behind the test's back.
type keepAliveConn struct {
	c  net.Conn
	br *bufio.Reader
}

func dialKeepAlive(t testing.TB, addr string) *keepAliveConn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return &keepAliveConn{c: c, br: bufio.NewReader(c)}
}

// answer is what one request on a keepAliveConn got.
type answer struct {
	status int
	body   string
	close  bool // the response said Connection: close
	err    error
}

func (k *keepAliveConn) get(host string) answer {
	_ = k.c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := fmt.Fprintf(k.c, "GET / HTTP/1.1\r\nHost: %s\r\n\r\n", host); err != nil {
		return answer{err: err}
	}
	resp, err := http.ReadResponse(k.br, &http.Request{Method: http.MethodGet})
	if err != nil {
		return answer{err: err}
	}
	b, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	return answer{status: resp.StatusCode, body: string(b), close: resp.Close, err: err}
}

// stoppableEcho is a haproxytest.Echo the test can stop.
type stoppableEcho struct {
	echo *haproxytest.Echo
	srv  *http.Server
	wg   sync.WaitGroup
	once sync.Once
}

func startStoppableEcho(t testing.TB, name string) *stoppableEcho {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	e := &stoppableEcho{srv: &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		_, _ = io.WriteString(w, name+"\n")
	})}}
	e.wg.Go(func() {
		if err := e.srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("echo %s: %v", name, err)
		}
	})
	t.Cleanup(e.stop)
	port := l.Addr().(*net.TCPAddr).Port
	e.echo = &haproxytest.Echo{Name: name, Addr: l.Addr().String(), Port: port}
	return e
}

// stop closes the listener and every connection, and waits.
func (e *stoppableEcho) stop() {
	e.once.Do(func() {
		_ = e.srv.Close()
		e.wg.Wait()
	})
}
