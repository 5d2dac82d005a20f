package agent_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/haptic-io/haptic/deployplan"
	"github.com/haptic-io/haptic/haproxysock"
	"github.com/haptic-io/haptic/internal/haproxytest"
	"github.com/haptic-io/haptic/renderplan"
)

// TestLeavingWorkerNeverSendsAKeepAliveClientToARemovedEndpoint is test
// 11. A slow request keeps the old worker alive across a reload while a
// keep-alive client hammers the route; then an endpoint is removed at
// runtime and its origin stopped. The agent replays the change to the
// leaving worker through the master CLI. The client must see no failed
// request and no answer from the removed endpoint after the removal.
//
// What HAProxy allows (measured, 3.4.7): a stopping worker refuses
// "set server … state maint" with "Proxy is disabled." wherever the
// proxy is already stopped, so the replay cannot move traffic there. It
// is not needed either: at soft-stop the leaving worker closes every idle
// keep-alive connection and adds "Connection: close" to the responses of
// the requests in flight, so a keep-alive client's next request always
// opens a new connection, which the new worker accepts. The test records
// the leaving worker's answer and checks the client-visible outcome.
func TestLeavingWorkerNeverSendsAKeepAliveClientToARemovedEndpoint(t *testing.T) {
	s := startSite(t, "3.4")
	slow := startSlow(t, "slow")
	pod1 := haproxytest.StartEcho(t, "pod-1")
	pod2 := haproxytest.StartEcho(t, "pod-2")
	a := s.newAgent(t, nil)
	w := world{routes: []route{
		{"api.example.com", "be_api", []renderplan.Server{server("pod-1", pod1), server("pod-2", pod2)}},
		{"slow.example.com", "be_slow", []renderplan.Server{server("slow", slow.echo)}},
	}}
	prev := s.build(t, w)
	mustApply(t, a, fullRequest(prev, 1))

	// The keep-alive client: one connection at a time, reused.
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{MaxConnsPerHost: 1, MaxIdleConnsPerHost: 1, Proxy: nil}}
	defer client.CloseIdleConnections()
	var removed atomic.Bool
	var failures, afterRemoval, total, fromRemoved atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := 0; i < 100000; i++ {
			select {
			case <-stop:
				return
			default:
			}
			req, _ := http.NewRequest(http.MethodGet, s.url(), nil)
			req.Host = "api.example.com"
			wasRemoved := removed.Load()
			resp, err := client.Do(req)
			total.Add(1)
			if err != nil {
				failures.Add(1)
				t.Logf("request %d: %v", i, err)
				continue
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				failures.Add(1)
				t.Logf("request %d: %d %q", i, resp.StatusCode, b)
			}
			if wasRemoved {
				afterRemoval.Add(1)
				if string(b) == "pod-1\n" {
					fromRemoved.Add(1)
				}
			}
			time.Sleep(2 * time.Millisecond)
		}
	})
	defer func() { close(stop); wg.Wait() }()

	slowDone := slow.inFlight(t, s.url(), "slow.example.com")
	// A reload: the old worker stays because of the slow request.
	w.extra = "    http-response set-header X-Gen 2\n"
	gen2 := s.build(t, w)
	req, d := diffRequest(t, s, prev, gen2, 2)
	if d.Verdict != deployplan.VerdictReload {
		t.Fatalf("verdict %s, want reload", d.Verdict)
	}
	mustApply(t, a, req)
	procs, err := (&haproxysock.Master{Path: s.master}).ShowProc(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	leaving := procs.Leaving()
	if len(leaving) == 0 {
		t.Fatalf("no leaving worker after the reload: %+v", procs)
	}
	old := leaving[0].PID

	// Remove pod-1 at runtime, then stop its origin.
	w.routes[0].servers = []renderplan.Server{server("pod-2", pod2)}
	gen3 := s.build(t, w)
	req, d = diffRequest(t, s, gen2, gen3, 3)
	if d.Verdict != deployplan.VerdictRuntime {
		t.Fatalf("verdict %s, want runtime", d.Verdict)
	}
	mustApply(t, a, req)
	removed.Store(true)
	// What the leaving worker says about pod-1 now (the agent replayed
	// "set server be_api/pod-1 state maint" to it).
	replay := rawCmd(t, s.master, fmt.Sprintf("@!%d set server be_api/pod-1 state maint", old))
	state := rawCmd(t, s.master, fmt.Sprintf("@!%d show servers state be_api", old))
	t.Logf("leaving worker %d answers set server maint: %q; its servers state:\n%s", old, strings.TrimSpace(replay), state)

	time.Sleep(500 * time.Millisecond)
	slow.Release()
	if err := <-slowDone; err != nil {
		t.Errorf("the slow request on the leaving worker failed: %v", err)
	}
	time.Sleep(200 * time.Millisecond)
	t.Logf("%d requests, %d after the removal, %d failed, %d answered by the removed endpoint", total.Load(), afterRemoval.Load(), failures.Load(), fromRemoved.Load())
	if failures.Load() != 0 || fromRemoved.Load() != 0 {
		t.Errorf("%d failed requests and %d answers from the removed endpoint, want 0 and 0", failures.Load(), fromRemoved.Load())
	}
	if afterRemoval.Load() == 0 {
		t.Error("no request ran after the removal")
	}
}
