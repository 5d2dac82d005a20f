package haproxysock_test

import (
	"errors"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/haptic-io/haptic/haproxysock"
	"github.com/haptic-io/haptic/internal/haproxytest"
)

// TestSessionRunsEveryKindOfBatchOnEveryVersion runs, on one session, the
// batches the agent sends: plain commands, a refused command in the
// middle of a batch, a chunked map payload, a map replace over two Runs,
// a certificate payload and a "wait". Each batch's replies must belong to
// its own commands, which they would not if the framing slipped (3.0
// prints one prompt per ';'-separated command, 3.2/3.4 one per line).
func TestSessionRunsEveryKindOfBatchOnEveryVersion(t *testing.T) {
	haproxytest.ForEachSeries(t, func(t *testing.T, series string) {
		e := startEnv(t, series)
		b := mustBuild(t)
		s := e.client.Session()
		defer s.Close()
		run := func(cmds ...haproxysock.Command) []haproxysock.Result {
			t.Helper()
			res, err := s.Run(t.Context(), cmds...)
			if err != nil {
				t.Fatalf("haproxy %s: %v", series, err)
			}
			return res
		}

		// Plain commands.
		res := run(
			b(haproxysock.AddServer("be_app", "dyn1", "127.0.0.1", e.b.Port, haproxysock.ServerOptions{})),
			b(haproxysock.SetServerState("be_app", "dyn1", haproxysock.StateReady)),
		)
		if res[0].Reply != "New server registered." {
			t.Fatalf("add server = %q", res[0].Reply)
		}

		// A refused command in the middle: the others run, the error is
		// command 2's, and the session stays usable.
		m := e.hostsMap
		res, err := s.Run(t.Context(),
			b(haproxysock.AddMap(m, "semi.test", "a;b")),
			b(haproxysock.SetMap(m, "absent.test", "x")),
			b(haproxysock.AddMap(m, "k1.test", "be_app")),
		)
		var ce *haproxysock.CommandError
		if !errors.As(err, &ce) || !strings.HasPrefix(err.Error(), "command 2 of 3:") {
			t.Fatalf("batch with a refused command: %v", err)
		}
		got := []string{}
		for _, r := range res {
			got = append(got, r.Reply+" | "+errText(r.Err))
		}
		want := []string{" | ", "entry not found. | refused", " | "}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("replies (-want +got):\n%s", diff)
		}
		if got := e.inst.Cmd(t, "get map "+m+" k1.test"); !strings.Contains(got, `value="be_app"`) {
			t.Errorf("k1.test after the batch: %q", got)
		}

		// A payload split into parts (more than one write), then a show
		// command whose answer must be its own.
		entries := hostEntries(2000, "be_app")
		res = run(
			b(haproxysock.AddMapPayload(e.dirMap("bench1.map"), entries)),
			b(haproxysock.GetMap(m, "semi.test")),
		)
		if n := e.mapCount(t, e.dirMap("bench1.map")); n != len(entries) {
			t.Errorf("bench1.map holds %d entries, want %d", n, len(entries))
		}
		if !strings.Contains(res[1].Reply, `value="a;b"`) {
			t.Errorf("get map semi.test = %q", res[1].Reply)
		}

		// A map replace: prepare, then entries and commit with the version.
		res = run(b(haproxysock.PrepareMap(e.dirMap("bench2.map"))))
		v, err := haproxysock.ParsePrepareMap(res[0].Reply)
		if err != nil {
			t.Fatal(err)
		}
		run(
			b(haproxysock.AddMapVersionPayload(v, e.dirMap("bench2.map"), entries[:300])),
			b(haproxysock.CommitMap(v, e.dirMap("bench2.map"))),
		)
		if n := e.mapCount(t, e.dirMap("bench2.map")); n != 300 {
			t.Errorf("bench2.map holds %d entries after the replace, want 300", n)
		}

		// A certificate payload.
		certPEM, keyPEM := selfSigned(t, "sess.test")
		cert := e.certDir + "/sess.test.pem"
		res = run(
			b(haproxysock.NewSSLCert(cert)),
			b(haproxysock.SetSSLCert(cert, []byte(certPEM+keyPEM))),
			b(haproxysock.CommitSSLCert(cert)),
			b(haproxysock.AddSSLCrtList(e.crtList, cert)),
		)
		if cn := e.servedCN(t, "sess.test"); cn != "sess.test" {
			t.Errorf("SNI sess.test served CN %q (replies %q)", cn, summary(res))
		}

		// A wait, and the delete it allows.
		res = run(
			b(haproxysock.SetServerState("be_app", "dyn1", haproxysock.StateMaint)),
			b(haproxysock.WaitServerRemovable(2*time.Second, "be_app", "dyn1")),
			b(haproxysock.DelServer("be_app", "dyn1")),
		)
		if res[1].Reply != "Done." || res[2].Reply != "Server deleted." {
			t.Fatalf("wait and delete = %q, %q", res[1].Reply, res[2].Reply)
		}
		if got := serverAdminState(t, e, "be_app", "dyn1"); got != "absent" {
			t.Errorf("dyn1 after del: %s", got)
		}
	})
}

func TestSessionRefusesUseAfterHAProxyStops(t *testing.T) {
	haproxytest.ForEachSeries(t, func(t *testing.T, series string) {
		e := startEnv(t, series)
		b := mustBuild(t)
		s := e.client.Session()
		defer s.Close()
		cmd := b(haproxysock.SetMap(e.hostsMap, "app.test", "be_app"))
		if _, err := s.Run(t.Context(), cmd); err != nil {
			t.Fatal(err)
		}
		// Stop the HAProxy this test started, by its master's PID.
		if err := syscall.Kill(e.inst.MasterPID, syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "haproxy exits", func() bool { done, _ := e.inst.Exited(); return done })
		res, err := s.Run(t.Context(), cmd)
		var ce *haproxysock.CommandError
		if err == nil || errors.As(err, &ce) || errors.Is(err, haproxysock.ErrSessionClosed) {
			t.Fatalf("Run on a stopped haproxy = %v, want a transport error", err)
		}
		if !errors.Is(res[0].Err, haproxysock.ErrNotRun) {
			t.Errorf("result %v, want ErrNotRun", res[0].Err)
		}
		res, err = s.Run(t.Context(), cmd)
		if !errors.Is(err, haproxysock.ErrSessionClosed) || !errors.Is(res[0].Err, haproxysock.ErrNotRun) {
			t.Fatalf("Run after the failure = %v (result %v), want ErrSessionClosed and ErrNotRun", err, res[0].Err)
		}
	})
}

// errText is "refused" for a CommandError, the error text for another
// error, and "" for none.
func errText(err error) string {
	var ce *haproxysock.CommandError
	switch {
	case err == nil:
		return ""
	case errors.As(err, &ce):
		return "refused"
	default:
		return err.Error()
	}
}

// dirMap is the path of maps/<name> in the instance's directory.
func (e *env) dirMap(name string) string { return e.inst.Dir + "/maps/" + name }
