package local_test

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/haptic-io/haptic/internal/haproxytest"
	"github.com/haptic-io/haptic/internal/local"
)

// TestRestartOnAnExistingWorkdirServesAfterOneApply stops local mode
// after a route landed and starts it again on the same work directory:
// the first apply of the new run (if it needs one at all) must succeed and
// the route must answer 200 right after it.
func TestRestartOnAnExistingWorkdirServesAfterOneApply(t *testing.T) {
	a := haproxytest.StartEcho(t, "echo-a")
	s := newSite(t, "3.4", baseOperatorConfig, nil)
	e := s.start()
	first := e.info.Loop.Status().PlanID
	e.write("a.yaml", route("a", "a.example", a))
	e.waitApplied(first)
	if code, body := e.get("a.example", "/"); code != 200 || body != "echo-a\n" {
		t.Fatalf("a.example before the restart: %d %q, want 200 from echo-a", code, body)
	}
	e.stop()

	e = s.start()
	e.checkConvergedInOneApply("a.example", "echo-a\n")
}

// checkConvergedInOneApply checks, right after the first plan of a run
// was applied, that host answers 200 with body and that the run needed at
// most one apply and no failed one.
func (e *env) checkConvergedInOneApply(host, body string) {
	e.t.Helper()
	if code, got := e.get(host, "/"); code != 200 || got != body {
		e.t.Errorf("%s after the restart: %d %q, want 200 %q", host, code, got, body)
	}
	if n := e.metric("haptic_deploy_apply_failures_total", local.PodName); n != 0 {
		e.t.Errorf("%v failed applies after the restart, want 0 (last error %v)", n, e.info.Loop.Status().LastError)
	}
	if n := e.metric("haptic_deploy_apply_total", local.PodName); n > 1 {
		e.t.Errorf("%v applies to converge after the restart, want at most 1", n)
	}
}

// TestARestartWhoseLastTreeDoesNotStartFallsBackToTheBootstrap: the
// second run listens elsewhere and the first run's port is taken, so
// HAProxy cannot start on the tree the first run committed; the second
// run starts it on the bootstrap configuration and converges in one
// apply.
func TestARestartWhoseLastTreeDoesNotStartFallsBackToTheBootstrap(t *testing.T) {
	a := haproxytest.StartEcho(t, "echo-a")
	s := newSite(t, "3.4", baseOperatorConfig, map[string]string{"a.yaml": route("a", "a.example", a)})
	e := s.start()
	if code, _ := e.get("a.example", "/"); code != 200 {
		t.Fatalf("a.example before the restart: %d, want 200", code)
	}
	e.stop()
	taken, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", s.port))
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	s.port = haproxytest.FreePort(t)

	e = s.start()
	e.checkConvergedInOneApply("a.example", "echo-a\n")
	if n := e.metric("haptic_deploy_apply_total", local.PodName); n != 1 {
		t.Errorf("%v applies, want the one full apply onto the bootstrap", n)
	}
}

// TestAKilledLocalModeTakesItsHAProxyAlongAndARestartServesAfterOneApply
// runs local mode in a child process: while it runs, a second local mode
// on its work dir is refused with an error naming it; once it is killed
// (SIGKILL, nothing of it runs any cleanup) its HAProxy master and worker
// end too, and local mode started again on the work dir serves the route
// after at most one apply.
func TestAKilledLocalModeTakesItsHAProxyAlongAndARestartServesAfterOneApply(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("HAProxy follows a killed supervisor through PR_SET_PDEATHSIG, which is Linux's")
	}
	a := haproxytest.StartEcho(t, "echo-a")
	s := newSite(t, "3.4", baseOperatorConfig, map[string]string{"a.yaml": route("a", "a.example", a)})
	c := s.startChild()
	url := fmt.Sprintf("http://127.0.0.1:%d/", s.port)
	waitFor(t, "the child to serve a.example", func() bool {
		code, _, err := haproxytest.TryGet(url, "a.example")
		return err == nil && code == 200
	})
	if c.info.Master <= 0 || c.info.Worker <= 0 {
		t.Fatalf("child info %+v: no HAProxy master or worker PID", c.info)
	}

	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	err := local.Run(ctx, s.config(prometheus.NewRegistry()))
	if want := fmt.Sprintf("work dir %s is in use", s.work); err == nil || !strings.Contains(err.Error(), want) ||
		!strings.Contains(err.Error(), fmt.Sprintf("locked by process %d", c.info.PID)) {
		t.Fatalf("a second local mode on the work dir: %v; want %q and the child's PID %d", err, want, c.info.PID)
	}
	t.Logf("a second local mode on the work dir: %v", err)
	if code, _, err := haproxytest.TryGet(url, "a.example"); err != nil || code != 200 {
		t.Errorf("a.example after the refused second start: %d %v, want 200 from the first", code, err)
	}

	c.kill(t)
	for _, p := range []struct {
		what string
		pid  int
	}{{"HAProxy master", c.info.Master}, {"HAProxy worker", c.info.Worker}} {
		waitFor(t, fmt.Sprintf("the killed supervisor's %s (pid %d) to end", p.what, p.pid), func() bool { return !running(p.pid) })
	}

	e := s.start()
	e.checkConvergedInOneApply("a.example", "echo-a\n")
}

// waitFor polls cond every 10 ms until it holds, at most waitTimeout.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// running reports whether pid is a process that has not ended (a zombie
// nobody reaped yet has ended).
func running(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(b, ')')
	return i < 0 || i+2 >= len(b) || b[i+2] != 'Z'
}
