package haproxysock_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/haptic-io/haptic/haproxysock"
)

// fakeMaster answers like HAProxy's master CLI in non-interactive mode: it
// reads the request until the client half-closes, then answers with
// reply(request) and closes. It records the requests.
type fakeMaster struct {
	reply func(req string) string
	mu    sync.Mutex
	reqs  []string
}

func (f *fakeMaster) serve(c net.Conn) {
	b, err := io.ReadAll(c)
	if err != nil {
		return
	}
	f.mu.Lock()
	f.reqs = append(f.reqs, string(b))
	f.mu.Unlock()
	_, _ = io.WriteString(c, f.reply(string(b)))
}

func (f *fakeMaster) requests() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.reqs...)
}

func TestReloadReturnsAlertsOfAFailedReload(t *testing.T) {
	fake := &fakeMaster{reply: func(string) string { return reload34Failed }}
	m := &haproxysock.Master{Path: fakeServer(t, fake.serve), Timeout: 2 * time.Second}
	res, err := m.Reload(context.Background())
	var re *haproxysock.ReloadError
	if !errors.As(err, &re) {
		t.Fatalf("Reload = %v, want *ReloadError", err)
	}
	if res.Success || len(re.Alerts) != 2 || !strings.Contains(err.Error(), "unknown keyword 'this_is_not_a_keyword'") {
		t.Errorf("result %+v, error %v", res, err)
	}
	if diff := cmp.Diff([]string{"reload\n"}, fake.requests()); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}

func TestShowProcParsesTheMastersAnswer(t *testing.T) {
	fake := &fakeMaster{reply: func(string) string { return showProc34Failed }}
	m := &haproxysock.Master{Path: fakeServer(t, fake.serve), Timeout: 2 * time.Second}
	p, err := m.ShowProc(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := p.Serving(); s.PID != 1559 {
		t.Errorf("serving %d, want 1559", s.PID)
	}
}

func TestRunOnWorkerRoutesEachCommandByPID(t *testing.T) {
	fake := &fakeMaster{reply: func(req string) string {
		if strings.Contains(req, "missing") {
			return "[3]: entry not found.\n\n"
		}
		return "\n"
	}}
	m := &haproxysock.Master{Path: fakeServer(t, fake.serve), Timeout: 2 * time.Second}
	b := mustBuild(t)
	res, err := m.RunOnWorker(context.Background(), 1234, b(haproxysock.SetMap("/m", "k", "v w")), b(haproxysock.SetMap("/m", "missing", "v")))
	var ce *haproxysock.CommandError
	if !errors.As(err, &ce) || ce.Reply != "entry not found." {
		t.Fatalf("RunOnWorker = %v, want the CommandError of command 2", err)
	}
	if res[0].Err != nil {
		t.Errorf("command 1: %v", res[0].Err)
	}
	want := []string{
		"set severity-output number; @!1234 set map /m k v\\ w\n",
		"set severity-output number; @!1234 set map /m missing v\n",
	}
	if diff := cmp.Diff(want, fake.requests()); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}

func TestRunOnWorkerDoesNotWaitForAMasterThatKeepsAnUnknownPIDOpen(t *testing.T) {
	// HAProxy 3.2/3.4 sometimes leave the connection open after this error.
	path := fakeServer(t, func(c net.Conn) {
		_, _ = bufio.NewReader(c).ReadString('\n')
		_, _ = io.WriteString(c, "Can't find the target PID matching the prefix '@!99'\n")
		_, _ = io.Copy(io.Discard, c)
	})
	m := &haproxysock.Master{Path: path, Timeout: time.Minute}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b := mustBuild(t)
	res, err := m.RunOnWorker(ctx, 99, b(haproxysock.SetMap("/m", "k", "v")), b(haproxysock.SetMap("/m", "k2", "v")))
	if !errors.Is(err, haproxysock.ErrNoSuchWorker) || ctx.Err() != nil {
		t.Fatalf("RunOnWorker = %v (ctx %v), want ErrNoSuchWorker before any timeout", err, ctx.Err())
	}
	if !errors.Is(res[1].Err, haproxysock.ErrNotRun) {
		t.Errorf("command 2: %v, want ErrNotRun", res[1].Err)
	}
}

func TestRunOnWorkerRefusesWaitBeforeSending(t *testing.T) {
	fake := &fakeMaster{reply: func(string) string { return "\n" }}
	m := &haproxysock.Master{Path: fakeServer(t, fake.serve), Timeout: 2 * time.Second}
	_, err := m.RunOnWorker(context.Background(), 7, haproxysock.ShowInfo(), mustBuild(t)(haproxysock.WaitServerRemovable(time.Second, "be", "s")))
	if !errors.Is(err, haproxysock.ErrInvalidArgument) {
		t.Fatalf("RunOnWorker(wait) = %v, want ErrInvalidArgument", err)
	}
	if len(fake.requests()) != 0 {
		t.Errorf("sent %q", fake.requests())
	}
}

func TestMasterTimesOutOnASocketThatNeverAnswers(t *testing.T) {
	hang := make(chan struct{})
	path := fakeServer(t, func(c net.Conn) {
		_, _ = io.Copy(io.Discard, c) // until the half-close
		<-hang
	})
	t.Cleanup(func() { close(hang) })
	m := &haproxysock.Master{Path: path, Timeout: 100 * time.Millisecond}
	if _, err := m.ShowProc(context.Background()); !isTimeout(err) {
		t.Fatalf("ShowProc = %v, want a timeout", err)
	}
}
