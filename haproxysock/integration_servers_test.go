package haproxysock_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/haptic-io/haptic/haproxysock"
	"github.com/haptic-io/haptic/internal/haproxytest"
)

// serverAdminState returns srv_admin_state of one server from "show servers
// state", read through the raw test channel.
func serverAdminState(t *testing.T, e *env, be, srv string) string {
	t.Helper()
	for _, l := range strings.Split(e.inst.Cmd(t, "show servers state "+be), "\n") {
		f := strings.Fields(l)
		// be_id be_name srv_id srv_name srv_addr srv_op_state srv_admin_state …
		if len(f) > 6 && f[1] == be && f[3] == srv {
			return f[6]
		}
	}
	return "absent"
}

func TestDynamicServersAreAddedChangedAndDeletedOnEveryVersion(t *testing.T) {
	haproxytest.ForEachSeries(t, func(t *testing.T, series string) {
		e := startEnv(t, series)
		b := mustBuild(t)

		e.run(t, b(haproxysock.AddServer("be_app", "dyn1", "127.0.0.1", e.b.Port, haproxysock.ServerOptions{
			Weight: 10, Check: true, CheckInter: time.Second, GUID: "be_app-dyn1"})))
		if got := serverAdminState(t, e, "be_app", "dyn1"); got != "1" {
			t.Fatalf("admin state after add = %s, want 1 (forced maintenance)", got)
		}
		// Traffic never reaches a server in maintenance.
		for range 4 {
			if _, body := e.get(t, "app.test"); body != "a\n" {
				t.Fatalf("body %q from a server in maintenance", body)
			}
		}
		e.run(t,
			b(haproxysock.SetServerState("be_app", "dyn1", haproxysock.StateReady)),
			b(haproxysock.EnableHealth("be_app", "dyn1")),
			b(haproxysock.SetServerWeight("be_app", "dyn1", 20)),
		)
		if got := serverAdminState(t, e, "be_app", "dyn1"); got != "0" {
			t.Fatalf("admin state after ready = %s, want 0", got)
		}
		seen := map[string]bool{}
		for i := 0; i < 20 && len(seen) < 2; i++ {
			_, body := e.get(t, "app.test")
			seen[body] = true
		}
		if !seen["b\n"] {
			t.Fatalf("the ready dynamic server got no request in 20: %v", seen)
		}
		reply, err := e.runOne(t, b(haproxysock.SetServerAddr("be_app", "dyn1", "127.0.0.1", e.a.Port)))
		if err != nil || !strings.Contains(reply, "port changed from") {
			t.Fatalf("set server addr = %q, %v", reply, err)
		}

		// del server needs maintenance.
		_, err = e.runOne(t, b(haproxysock.DelServer("be_app", "dyn1")))
		var ce *haproxysock.CommandError
		if !errors.As(err, &ce) || !strings.Contains(ce.Reply, "maintenance") {
			t.Fatalf("del server while ready = %v, want a refusal about maintenance", err)
		}
		res := e.run(t,
			b(haproxysock.SetServerState("be_app", "dyn1", haproxysock.StateMaint)),
			b(haproxysock.WaitServerRemovable(2*time.Second, "be_app", "dyn1")),
			b(haproxysock.DelServer("be_app", "dyn1")),
		)
		if res[1].Reply != "Done." || res[2].Reply != "Server deleted." {
			t.Fatalf("replies %q / %q", res[1].Reply, res[2].Reply)
		}
		if got := serverAdminState(t, e, "be_app", "dyn1"); got != "absent" {
			t.Fatalf("server still listed after del: %s", got)
		}
	})
}

func TestServerRefusalsDifferAsMeasured(t *testing.T) {
	haproxytest.ForEachSeries(t, func(t *testing.T, series string) {
		e := startEnv(t, series)
		b := mustBuild(t)
		_, err := e.runOne(t, b(haproxysock.AddServer("be_hash", "d", "127.0.0.1", e.b.Port, haproxysock.ServerOptions{})))
		var ce *haproxysock.CommandError
		if !errors.As(err, &ce) || !strings.Contains(ce.Reply, "dynamic") {
			t.Errorf("add server into a static-balance backend = %v, want a refusal", err)
		}
		_, err = e.runOne(t, b(haproxysock.AddServer("be_app", "i", "127.0.0.1", e.b.Port, haproxysock.ServerOptions{Extra: []string{"init-state", "up"}})))
		if series == "3.0" {
			if !errors.As(err, &ce) || !strings.Contains(ce.Reply, "init-state") {
				t.Errorf("init-state on 3.0 = %v, want an unknown keyword refusal", err)
			}
		} else if err != nil {
			t.Errorf("init-state on %s = %v, want success", series, err)
		}
		_, err = e.runOne(t, b(haproxysock.AddServer("be_nope", "x", "127.0.0.1", 1, haproxysock.ServerOptions{})))
		if !errors.As(err, &ce) || ce.Reply != "No such backend." {
			t.Errorf("add server into a missing backend = %v", err)
		}
	})
}

func TestDynamicBackendLifecycle(t *testing.T) {
	haproxytest.ForEachSeries(t, func(t *testing.T, series string) {
		e := startEnv(t, series)
		b := mustBuild(t)
		add := b(haproxysock.AddBackend("be_rt", "profile_http", haproxysock.BackendOptions{GUID: "be_rt-guid"}))
		if series != "3.4" {
			_, err := e.runOne(t, add)
			if !errors.Is(err, haproxysock.ErrUnsupported) {
				t.Fatalf("add backend on %s = %v, want ErrUnsupported", series, err)
			}
			return
		}
		e.run(t,
			add,
			b(haproxysock.AddServer("be_rt", "s1", "127.0.0.1", e.b.Port, haproxysock.ServerOptions{GUID: "be_rt-s1"})),
			b(haproxysock.SetServerState("be_rt", "s1", haproxysock.StateReady)),
			b(haproxysock.AddMap(e.hostsMap, "rt.test", "be_rt")),
		)
		if status, _ := e.get(t, "rt.test"); status != 404 {
			t.Fatalf("unpublished backend answered %d, want 404 from the default backend", status)
		}
		e.run(t, b(haproxysock.PublishBackend("be_rt")))
		if status, body := e.get(t, "rt.test"); status != 200 || body != "b\n" {
			t.Fatalf("published backend answered %d %q, want 200 from echo b", status, body)
		}
		_, err := e.runOne(t, b(haproxysock.DelBackend("be_rt")))
		var ce *haproxysock.CommandError
		if !errors.As(err, &ce) || !strings.Contains(ce.Reply, "unpublished") {
			t.Fatalf("del of a published backend = %v, want a refusal", err)
		}
		res := e.run(t,
			b(haproxysock.UnpublishBackend("be_rt")),
			b(haproxysock.DelMap(e.hostsMap, "rt.test")),
			b(haproxysock.SetServerState("be_rt", "s1", haproxysock.StateMaint)),
			b(haproxysock.WaitServerRemovable(2*time.Second, "be_rt", "s1")),
			b(haproxysock.DelServer("be_rt", "s1")),
			b(haproxysock.WaitBackendRemovable(2*time.Second, "be_rt")),
			b(haproxysock.DelBackend("be_rt")),
		)
		if got := res[len(res)-1].Reply; !strings.HasSuffix(got, "Backend deleted.") {
			t.Fatalf("del backend replied %q", got)
		}
		if strings.Contains(e.inst.Cmd(t, "show backend"), "be_rt") {
			t.Fatal("be_rt still listed after del backend")
		}
	})
}
