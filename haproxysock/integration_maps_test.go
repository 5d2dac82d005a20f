package haproxysock_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/haptic-io/haptic/haproxysock"
	"github.com/haptic-io/haptic/internal/haproxytest"
)

func hostEntries(n int, value string) []haproxysock.MapEntry {
	out := make([]haproxysock.MapEntry, n)
	for i := range out {
		out[i] = haproxysock.MapEntry{Key: fmt.Sprintf("h%05d.example.test", i), Value: value}
	}
	return out
}

func TestMapEditsOnEveryVersion(t *testing.T) {
	haproxytest.ForEachSeries(t, func(t *testing.T, series string) {
		e := startEnv(t, series)
		b := mustBuild(t)
		m := e.hostsMap
		e.run(t,
			b(haproxysock.AddMap(m, "k1.test", "be_app")),
			b(haproxysock.SetMap(m, "k1.test", "a value with spaces")),
		)
		// An escaped space is stored as a space, read back independently.
		got := e.inst.Cmd(t, "get map "+m+" k1.test")
		if !strings.Contains(got, `value="a value with spaces"`) {
			t.Fatalf("get map = %q", got)
		}
		_, err := e.runOne(t, b(haproxysock.SetMap(m, "absent.test", "x")))
		var ce *haproxysock.CommandError
		if !errors.As(err, &ce) || ce.Reply != "entry not found." {
			t.Fatalf("set map on an absent key = %v", err)
		}
		// Duplicates: del map removes all copies on 3.0/3.2, one on 3.4.7.
		e.run(t, b(haproxysock.AddMap(m, "dup.test", "x")), b(haproxysock.AddMap(m, "dup.test", "y")),
			b(haproxysock.DelMap(m, "dup.test")))
		left := strings.Count(e.inst.Cmd(t, "show map "+m), " dup.test ")
		want := 0
		if series == "3.4" {
			want = 1
		}
		if left != want {
			t.Errorf("after one del of a duplicated key %d copies remain, want %d", left, want)
		}
		e.run(t, b(haproxysock.ClearMap(m)))
		if n := e.mapCount(t, m); n != 0 {
			t.Errorf("%d entries after clear map", n)
		}
	})
}

func TestVersionedReplaceOf10000EntriesIsChunkedAndAtomic(t *testing.T) {
	haproxytest.ForEachSeries(t, func(t *testing.T, series string) {
		e := startEnv(t, series)
		b := mustBuild(t)
		m := e.hostsMap
		res := e.run(t, b(haproxysock.PrepareMap(m)))
		v, err := haproxysock.ParsePrepareMap(res[0].Reply)
		if err != nil {
			t.Fatal(err)
		}
		entries := append(hostEntries(10000, "be_app"), haproxysock.MapEntry{Key: "new.test", Value: "be_app"})
		e.run(t, b(haproxysock.AddMapVersionPayload(v, m, entries)))
		// Not visible before the commit: the file's single entry serves.
		if n := e.mapCount(t, m); n != 1 {
			t.Fatalf("%d entries visible before commit, want 1", n)
		}
		if status, _ := e.get(t, "new.test"); status != 404 {
			t.Fatalf("uncommitted entry routed: %d", status)
		}
		e.run(t, b(haproxysock.CommitMap(v, m)))
		if n := e.mapCount(t, m); n != 10001 {
			t.Fatalf("%d entries after commit, want 10001", n)
		}
		if status, body := e.get(t, "new.test"); status != 200 || body != "a\n" {
			t.Fatalf("committed entry: %d %q", status, body)
		}
		if status, _ := e.get(t, "app.test"); status != 404 {
			t.Fatalf("the replaced entry app.test still routes: %d", status)
		}
	})
}

func TestPayloadLargerThanBufSizeIsSplitAndEveryEntryLands(t *testing.T) {
	// Unsplit, 54 KB hangs 3.0 and is refused by 3.2 (facts §5).
	haproxytest.ForEachSeries(t, func(t *testing.T, series string) {
		e := startEnv(t, series)
		cmd := mustBuild(t)(haproxysock.AddMapPayload(e.hostsMap, hostEntries(2000, "be_app")))
		if n := len(strings.Join(cmd.Payload(), "\n")); n <= haproxysock.DefaultBufSize {
			t.Fatalf("payload of %d bytes does not exceed bufsize", n)
		}
		e.run(t, cmd)
		if n := e.mapCount(t, e.hostsMap); n != 2001 {
			t.Fatalf("%d entries, want 2001", n)
		}
	})
}

func TestEscapedValuesCannotRunASecondCommand(t *testing.T) {
	haproxytest.ForEachSeries(t, func(t *testing.T, series string) {
		e := startEnv(t, series)
		b := mustBuild(t)
		m := e.hostsMap
		values := []string{
			"x;clear map " + m,
			`x\;clear map ` + m,
			`x\`,
			`'quoted value'`,
			`"dq" \\ end`,
			"tab\\tnot",
			"@!1 show info",
		}
		for i, v := range values {
			key := fmt.Sprintf("inj%d.test", i)
			e.run(t, b(haproxysock.AddMap(m, key, v)))
			got := e.inst.Cmd(t, "show map "+m)
			if !strings.Contains(got, " app.test be_app") {
				t.Fatalf("value %q cleared the map: %q", v, got)
			}
			if !strings.Contains(got, " "+key+" "+v+"\n") {
				t.Fatalf("value %q not stored verbatim: %q", v, got)
			}
		}
		// Extra server keywords are escaped too: the ';' stays inside the
		// weight argument (HAProxy reads its leading number) and a1 is
		// not put in maintenance.
		_, _ = e.runOne(t, b(haproxysock.AddServer("be_app", "inj", "127.0.0.1", e.b.Port, haproxysock.ServerOptions{
			Extra: []string{"weight", "5;set server be_app/a1 state maint"}})))
		if got := serverAdminState(t, e, "be_app", "a1"); got != "0" {
			t.Fatalf("a1 admin state %s: the injected command ran", got)
		}
	})
}
