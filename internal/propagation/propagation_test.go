package propagation_test

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/haptic-io/haptic/internal/haproxytest"
	"github.com/haptic-io/haptic/internal/local"
	"github.com/haptic-io/haptic/internal/propagation"
)

// children are the argv builders of the benchmark's child processes, run
// by this test binary (see TestMain); nil runs them in process.
type children struct {
	probe func(url string) []string
	echo  func(listen []string) []string
}

// childCommands runs this test binary as the probe client and the echo
// servers.
func childCommands(t *testing.T) children {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return children{
		probe: func(url string) []string { return []string{exe, "probe-client", "--url", url} },
		echo: func(listen []string) []string {
			argv := []string{exe, "echo-servers"}
			for _, l := range listen {
				argv = append(argv, "--listen", l)
			}
			return argv
		},
	}
}

// runPropagation runs the probe (3 routes) and, with flips, the
// routechange scenario on HAProxy 3.4.
func runPropagation(t *testing.T, c children, flips int) (*propagation.Result, error) {
	t.Helper()
	bin := haproxytest.Binary(t, "3.4")
	ctx, cancel := context.WithTimeout(context.Background(), 2*waitTimeout)
	defer cancel()
	return propagation.Run(ctx, propagation.Config{
		HAProxy:           bin,
		Routes:            3,
		Flips:             flips,
		FlipInterval:      50e6, // 50 ms
		MinReloadInterval: -1,
		SteadyWait:        100 * time.Millisecond,
		ProbeCommand:      c.probe,
		EchoCommand:       c.echo,
		Local: local.Config{
			Log:           slog.New(slog.NewTextHandler(tWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn})),
			HAProxyOutput: tWriter{t},
			WorkDir:       t.TempDir(),
		},
	})
}

func TestPropagationTimesEveryRouteFromWriteTo200AndFlipsWithoutErrors(t *testing.T) {
	for _, tc := range []struct {
		name     string
		children func(t *testing.T) children
		where    string
	}{
		{"with the probe client and echo servers as child processes", childCommands, propagation.InChildProcess},
		{"with everything in process", func(*testing.T) children { return children{} }, propagation.InThisProcess},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Three flips end on the other backend: both serve, however
			// many flips a reconciliation coalesces.
			res, err := runPropagation(t, tc.children(t), 3)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if res.Echo != tc.where {
				t.Errorf("echo servers ran in %q, want %q", res.Echo, tc.where)
			}
			p := res.Probe
			if p == nil {
				t.Fatal("no probe result")
			}
			if p.Poller != tc.where {
				t.Errorf("poller %q, want %q", p.Poller, tc.where)
			}
			if len(p.Latencies) != 3 {
				t.Fatalf("%d latencies, want one per route (3): %v", len(p.Latencies), p.Latencies)
			}
			// Polling began before each write and the route did not exist
			// then, so every 200 came after its write.
			for _, l := range p.Latencies {
				if l <= 0 {
					t.Errorf("latency %v: the 200 came before the write", l)
				}
			}
			if p.Requests < 2*3 {
				t.Errorf("%d requests, want at least a 404 and a 200 per route", p.Requests)
			}
			if len(p.Unexpected) != 0 {
				t.Errorf("unexpected answers: %+v", p.Unexpected)
			}
			if p.Reloads != 0 {
				t.Errorf("%d reloads, want 0 (plain routes are runtime-only on 3.4)", p.Reloads)
			}
			rc := res.RouteChange
			if rc == nil {
				t.Fatal("no routechange result")
			}
			if len(rc.NonOK) != 0 {
				t.Errorf("routechange answers other than 200: %+v", rc.NonOK)
			}
			if len(rc.Served) != 2 {
				t.Errorf("served by %v, want both echo servers", rc.Served)
			}
		})
	}
}

func TestPropagationPreloadsRoutesAndProfilesTheProbe(t *testing.T) {
	bin := haproxytest.Binary(t, "3.4")
	ctx, cancel := context.WithTimeout(context.Background(), 2*waitTimeout)
	defer cancel()
	c := childCommands(t)
	var profile, heapProfile, peakProfile bytes.Buffer
	res, err := propagation.Run(ctx, propagation.Config{
		HAProxy:           bin,
		Preload:           20,
		PeakHeapProfile:   &peakProfile,
		Routes:            2,
		MinReloadInterval: -1,
		SteadyWait:        100 * time.Millisecond,
		ProbeCommand:      c.probe,
		EchoCommand:       c.echo,
		CPUProfile:        &profile,
		HeapProfile:       &heapProfile,
		Local: local.Config{
			IdleGC:        true,
			Log:           slog.New(slog.NewTextHandler(tWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn})),
			HAProxyOutput: tWriter{t},
			WorkDir:       t.TempDir(),
		},
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	p := res.Probe
	if p == nil || p.Preloaded != 20 || len(p.Latencies) != 2 {
		t.Fatalf("probe %+v, want 2 adds after 20 preloaded routes", p)
	}
	if len(p.Unexpected) != 0 || p.Reloads != 0 {
		t.Errorf("unexpected answers %+v, reloads %d: want none", p.Unexpected, p.Reloads)
	}
	// A pprof profile is gzip-compressed protobuf.
	for name, b := range map[string][]byte{"CPU": profile.Bytes(), "heap": heapProfile.Bytes(), "peak heap": peakProfile.Bytes()} {
		if len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
			t.Errorf("%s profile of %d bytes is not gzip data", name, len(b))
		}
	}
	// Two route adds render, diff and apply: far more than nothing, far
	// less than the whole process's allocations (the preload's among them).
	if p.HeapAllocated == 0 || p.HeapAllocated > 1<<30 {
		t.Errorf("probe allocated %d bytes, want a count of this probe's own", p.HeapAllocated)
	}
	m := res.Memory
	if m == nil || m.Routes != 22 {
		t.Fatalf("memory %+v, want one read with the 22 routes in place", m)
	}
	// The kernel folds its per-CPU RSS counters into VmHWM lazily, so a
	// VmRSS read can exceed the VmHWM read before it by that slack.
	if m.Steady <= 0 || m.Peak < m.Steady-m.Steady/16 || m.HeapLive == 0 || m.HeapLivePeak < m.HeapLive || m.HeapObjectsPeak < m.HeapLivePeak || m.MappedPeak < m.HeapObjectsPeak {
		t.Errorf("memory %+v: want 0 < steady <= peak resident set, and live <= live peak <= objects peak <= mapped peak", m)
	}
}

func TestPropagationPacesIsolatedRoutesAndServesEveryRouteOfAStorm(t *testing.T) {
	bin := haproxytest.Binary(t, "3.4")
	ctx, cancel := context.WithTimeout(context.Background(), 2*waitTimeout)
	defer cancel()
	c := childCommands(t)
	res, err := propagation.Run(ctx, propagation.Config{
		HAProxy:           bin,
		Routes:            2,
		Pace:              propagation.PaceIsolated,
		Storm:             40,
		MinReloadInterval: -1,
		SteadyWait:        100 * time.Millisecond,
		ProbeCommand:      c.probe,
		EchoCommand:       c.echo,
		Local: local.Config{
			Log:           slog.New(slog.NewTextHandler(tWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn})),
			HAProxyOutput: tWriter{t},
			WorkDir:       t.TempDir(),
		},
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if p := res.Probe; p == nil || p.Pace != propagation.PaceIsolated || len(p.Latencies) != 2 {
		t.Errorf("probe %+v, want 2 isolated route adds", p)
	}
	st := res.Storm
	if st == nil {
		t.Fatal("no storm result")
	}
	if st.Routes != 40 || st.Unserved != 0 || len(st.Unexpected) != 0 || st.Reloads != 0 {
		t.Errorf("storm %+v, want 40 routes served, no unexpected answer, no reload", st)
	}
	// Each reconciliation covers at least one of the storm's changes.
	if st.Reconciliations < 1 || st.Reconciliations > st.Routes {
		t.Errorf("storm took %d reconciliations for %d routes", st.Reconciliations, st.Routes)
	}
	if st.Written <= 0 || st.Settled <= 0 {
		t.Errorf("storm written in %v, settled in %v: want both measured", st.Written, st.Settled)
	}
}

func TestPropagationRejectsAnUnknownPace(t *testing.T) {
	_, err := propagation.Run(context.Background(), propagation.Config{HAProxy: "haproxy", Pace: "sometimes"})
	if err == nil || !strings.Contains(err.Error(), `unknown Pace "sometimes"`) {
		t.Fatalf("error %v, want the unknown pace named", err)
	}
}

func TestPropagationFailsWhenTheProbeClientExits(t *testing.T) {
	c := childCommands(t)
	probe := c.probe
	// An unknown flag: the child exits with status 2 before any answer.
	c.probe = func(url string) []string { return append(probe(url), "--no-such-flag") }
	res, err := runPropagation(t, c, 0)
	if err == nil || !strings.Contains(err.Error(), "probe client stopped answering") || !strings.Contains(err.Error(), "exit status 2") {
		t.Fatalf("error %v, want the probe client's exit named", err)
	}
	if res == nil || res.Probe == nil || len(res.Probe.Latencies) != 0 {
		t.Errorf("result %+v, want a probe without latencies", res)
	}
}

func TestPropagationFailsWhenTheEchoServersCannotListen(t *testing.T) {
	c := childCommands(t)
	echo := c.echo
	c.echo = func([]string) []string { return echo([]string{"127.0.0.1:0", "127.0.0.1:no-port"}) }
	_, err := runPropagation(t, c, 0)
	if err == nil || !strings.Contains(err.Error(), "echo servers stopped answering") || !strings.Contains(err.Error(), "exit status 1") {
		t.Fatalf("error %v, want the echo servers' exit named", err)
	}
}

func TestMediansByTenthFollowWriteOrder(t *testing.T) {
	var r propagation.ProbeResult
	if got := r.MediansByTenth(); got != nil {
		t.Errorf("no routes: %v, want nil", got)
	}
	// 20 routes, two per tenth; tenth i holds i ms and 100+i ms written
	// in either order, so each median is the lower one: i ms.
	for i := range 10 {
		a, b := time.Duration(i)*time.Millisecond, time.Duration(100+i)*time.Millisecond
		if i%2 == 0 {
			a, b = b, a
		}
		r.InOrder = append(r.InOrder, a, b)
	}
	got := r.MediansByTenth()
	for i, d := range got {
		if want := time.Duration(i) * time.Millisecond; d != want {
			t.Errorf("tenth %d: %v, want %v (all: %v)", i, d, want, got)
		}
	}
	if len(got) != 10 {
		t.Errorf("%d tenths, want 10", len(got))
	}
}
