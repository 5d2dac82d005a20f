package haproxysock_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/haptic-io/haptic/haproxysock"
	"github.com/haptic-io/haptic/internal/haproxytest"
)

func TestInfoIdentifiesTheServingWorker(t *testing.T) {
	haproxytest.ForEachSeries(t, func(t *testing.T, series string) {
		e := startEnv(t, series)
		info, err := e.client.Info(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		procs, err := e.master.ShowProc(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		serving, ok := procs.Serving()
		if !ok || serving.PID != info.PID {
			t.Fatalf("show info pid %d, show proc serving %+v", info.PID, serving)
		}
		if info.Version != e.inst.Version || procs.Master.PID != e.inst.MasterPID {
			t.Errorf("info %+v, procs %+v, instance version %s master %d", info, procs, e.inst.Version, e.inst.MasterPID)
		}
		if info.StartTime.IsZero() || time.Since(info.StartTime) > time.Minute {
			t.Errorf("start time %v", info.StartTime)
		}
	})
}

func TestReloadIsSynchronousAndDropsRuntimeChanges(t *testing.T) {
	haproxytest.ForEachSeries(t, func(t *testing.T, series string) {
		e := startEnv(t, series)
		b := mustBuild(t)
		e.run(t,
			b(haproxysock.AddMap(e.hostsMap, "rt.test", "be_app")),
			b(haproxysock.AddServer("be_app", "rt1", "127.0.0.1", e.b.Port, haproxysock.ServerOptions{})),
		)
		before, err := e.client.Info(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		res, err := e.master.Reload(t.Context())
		if err != nil || !res.Success || len(res.Alerts) != 0 {
			t.Fatalf("reload = %+v, %v", res, err)
		}
		// Synchronous: the very next connection reaches the new worker.
		after, err := e.client.Info(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if after.PID == before.PID {
			t.Fatalf("show info after reload still from worker %d", before.PID)
		}
		procs, err := e.master.ShowProc(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if s, _ := procs.Serving(); s.PID != after.PID || procs.Master.Reloads != 1 || procs.LastReloadFailed() {
			t.Errorf("show proc after reload: %+v", procs)
		}
		// Nothing done at runtime survives.
		if status, _ := e.get(t, "rt.test"); status != 404 {
			t.Errorf("runtime map entry survived the reload: %d", status)
		}
		if got := serverAdminState(t, e, "be_app", "rt1"); got != "absent" {
			t.Errorf("runtime server survived the reload: %s", got)
		}
	})
}

func TestFailedReloadKeepsTheOldWorkerAndReportsAlerts(t *testing.T) {
	haproxytest.ForEachSeries(t, func(t *testing.T, series string) {
		e := startEnv(t, series)
		before, err := e.client.Info(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		good := readFileOrFail(t, e.inst.ConfigPath)
		e.inst.WriteFile(t, "haproxy.cfg", good+"\nfrontend broken\n    this_is_not_a_keyword on\n")
		res, err := e.master.Reload(t.Context())
		var re *haproxysock.ReloadError
		if !errors.As(err, &re) || res.Success {
			t.Fatalf("reload of a broken config = %+v, %v; want *ReloadError", res, err)
		}
		if !strings.Contains(err.Error(), "this_is_not_a_keyword") || !strings.HasPrefix(re.Alerts[0], "[ALERT]") {
			t.Errorf("alerts %q", re.Alerts)
		}
		// The old worker keeps answering, and show proc names it whatever
		// the version lists it under.
		after, err := e.client.Info(t.Context())
		if err != nil || after.PID != before.PID {
			t.Fatalf("after a failed reload: info %+v, %v; want worker %d", after, err, before.PID)
		}
		if status, body := e.get(t, "app.test"); status != 200 || body != "a\n" {
			t.Errorf("traffic after a failed reload: %d %q", status, body)
		}
		procs, err := e.master.ShowProc(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		serving, ok := procs.Serving()
		if !ok || serving.PID != before.PID || !procs.LastReloadFailed() {
			t.Fatalf("show proc after a failed reload: %+v", procs)
		}
		if series == "3.0" && len(procs.Workers) != 1 || series != "3.0" && len(procs.Workers) != 0 {
			t.Errorf("series %s lists %d current workers (facts: 1 on 3.0, 0 after)", series, len(procs.Workers))
		}
		// A good reload clears the failure.
		e.inst.WriteFile(t, "haproxy.cfg", good)
		if _, err := e.master.Reload(t.Context()); err != nil {
			t.Fatal(err)
		}
		if procs, err = e.master.ShowProc(t.Context()); err != nil || procs.LastReloadFailed() {
			t.Fatalf("after a good reload: %+v, %v", procs, err)
		}
	})
}

func TestRunOnWorkerReachesAnOldWorker(t *testing.T) {
	haproxytest.ForEachSeries(t, func(t *testing.T, series string) {
		slowAddr, release := startSlow(t)
		e := startEnv(t, series)
		b := mustBuild(t)
		// Route slow.test to a slow server, then keep one request in flight
		// across a reload so that the old worker stays.
		e.run(t,
			b(haproxysock.AddServer("be_app", "slow", "127.0.0.1", portOf(t, slowAddr), haproxysock.ServerOptions{})),
			b(haproxysock.SetServerState("be_app", "slow", haproxysock.StateReady)),
			b(haproxysock.SetServerState("be_app", "a1", haproxysock.StateMaint)),
		)
		old, err := e.client.Info(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		inflight := make(chan struct{})
		go func() {
			defer close(inflight)
			_, _, _ = haproxytest.TryGet(e.url, "app.test")
		}()
		waitFor(t, "the request reaches the slow server", func() bool {
			return curConns(t, e, "slow") > 0
		})
		if _, err := e.master.Reload(t.Context()); err != nil {
			t.Fatal(err)
		}
		procs, err := e.master.ShowProc(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		leaving := procs.Leaving()
		if len(leaving) != 1 || leaving[0].PID != old.PID {
			t.Fatalf("show proc: %+v, want old worker %d leaving", procs, old.PID)
		}
		res, err := e.master.RunOnWorker(t.Context(), old.PID, haproxysock.ShowInfo(), b(haproxysock.SetServerWeight("be_app", "slow", 7)))
		if len(res) != 2 {
			t.Fatalf("RunOnWorker: %v", err)
		}
		info, perr := haproxysock.ParseInfo(res[0].Reply)
		if res[0].Err != nil || perr != nil || info.PID != old.PID {
			t.Fatalf("show info on the old worker: %q, %v, %v", res[0].Reply, res[0].Err, perr)
		}
		var ce *haproxysock.CommandError
		if !errors.As(res[1].Err, &ce) || ce.Reply != "Proxy is disabled." {
			t.Errorf("a change on the old worker = %v, want Proxy is disabled.", res[1].Err)
		}
		// An unknown PID is reported, without waiting for a timeout.
		if _, err := e.master.RunOnWorker(t.Context(), 999999, haproxysock.ShowInfo()); !errors.Is(err, haproxysock.ErrNoSuchWorker) {
			t.Errorf("RunOnWorker(999999) = %v, want ErrNoSuchWorker", err)
		}
		release()
		<-inflight
	})
}

func TestRunOnWorkerSplitsPayloadsAndReportsRefusals(t *testing.T) {
	haproxytest.ForEachSeries(t, func(t *testing.T, series string) {
		e := startEnv(t, series)
		b := mustBuild(t)
		info, err := e.client.Info(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		res, err := e.master.RunOnWorker(t.Context(), info.PID,
			b(haproxysock.AddMapPayload(e.hostsMap, hostEntries(2000, "be_app"))),
			b(haproxysock.SetMap(e.hostsMap, "absent.test", "x")),
			b(haproxysock.SetMap(e.hostsMap, "app.test", "be_default")),
		)
		var ce *haproxysock.CommandError
		if !errors.As(err, &ce) || ce.Reply != "entry not found." {
			t.Fatalf("RunOnWorker = %v, want the refusal of the absent key", err)
		}
		if res[0].Err != nil || res[2].Err != nil {
			t.Fatalf("results %+v", res)
		}
		if n := e.mapCount(t, e.hostsMap); n != 2001 {
			t.Fatalf("%d entries, want 2001", n)
		}
		if status, _ := e.get(t, "app.test"); status != 404 {
			t.Errorf("set map through the master did not apply: %d", status)
		}
	})
}

func TestWaitWaitsOnTheWorkerSocketButNotThroughTheMaster(t *testing.T) {
	haproxytest.ForEachSeries(t, func(t *testing.T, series string) {
		slowAddr, release := startSlow(t)
		e := startEnv(t, series)
		b := mustBuild(t)
		e.run(t,
			b(haproxysock.AddServer("be_app", "slow", "127.0.0.1", portOf(t, slowAddr), haproxysock.ServerOptions{})),
			b(haproxysock.SetServerState("be_app", "slow", haproxysock.StateReady)),
			b(haproxysock.SetServerState("be_app", "a1", haproxysock.StateMaint)),
		)
		inflight := make(chan struct{})
		go func() {
			defer close(inflight)
			_, _, _ = haproxytest.TryGet(e.url, "app.test")
		}()
		waitFor(t, "the request reaches the slow server", func() bool { return curConns(t, e, "slow") > 0 })
		e.run(t, b(haproxysock.SetServerState("be_app", "slow", haproxysock.StateMaint)))
		info, err := e.client.Info(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		// Through the master, HAProxy interrupts wait at once (the master
		// half-closes its side), which is why RunOnWorker refuses it.
		if got := e.inst.MasterCmd(t, "@!"+strconv.Itoa(info.PID)+" wait 2000 srv-removable be_app/slow"); !strings.HasPrefix(got, "Interrupted.") {
			t.Errorf("wait through the master = %q, want Interrupted.", got)
		}
		// On the worker socket it waits: it expires while the request runs…
		reply, err := e.runOne(t, b(haproxysock.WaitServerRemovable(100*time.Millisecond, "be_app", "slow")))
		if err == nil || !strings.HasPrefix(reply, "Wait delay expired.") {
			t.Fatalf("wait with a request in flight = %q, %v; want Wait delay expired.", reply, err)
		}
		// …and succeeds once the request ends.
		go func() { time.Sleep(200 * time.Millisecond); release() }()
		res := e.run(t,
			b(haproxysock.WaitServerRemovable(5*time.Second, "be_app", "slow")),
			b(haproxysock.DelServer("be_app", "slow")),
		)
		if res[0].Reply != "Done." || res[1].Reply != "Server deleted." {
			t.Fatalf("replies %q, %q", res[0].Reply, res[1].Reply)
		}
		<-inflight
	})
}
