package main

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/haptic-io/haptic/internal/local"
	"github.com/haptic-io/haptic/internal/propagation"
)

// benchmarkPropagationCommand is `haptic benchmark propagation`: how fast
// an object change reaches HAProxy's answers in local mode.
func benchmarkPropagationCommand() *cli.Command {
	return &cli.Command{
		Name:  "propagation",
		Usage: "time route adds and route changes end to end on real HAProxy (local mode)",
		Description: "Starts local mode (stock libraries, two echo backends) on --haproxy, then:\n" +
			"  probe:       creates --routes routes one at a time (an Ingress, its Service and EndpointSlice\n" +
			"               in one file), polls each new host every millisecond from before the write until\n" +
			"               the first 200, and reports p50/p90/p99/max, answers that are neither 404 nor 200,\n" +
			"               and the reloads during the run;\n" +
			"  routechange: keeps traffic on one route while its backend flips --flips times, --flip-interval\n" +
			"               apart, and reports every answer that is not 200;\n" +
			"  storm:       writes --storm new routes within about 100 ms, one file each, and reports the\n" +
			"               reconciliations they took and the time from the last write to the last route's 200.\n" +
			"--pace back-to-back (the default) writes each route right after the previous route's first 200,\n" +
			"as the public gateway-api-bench probe does; --pace isolated waits --debounce + 5ms after each 200,\n" +
			"so that every route finds the loop idle.\n" +
			"The poller and the two echo backends run as child processes (this binary's hidden `benchmark\n" +
			"probe-client` and `benchmark echo-servers`), as a real client and real backends do, so that local\n" +
			"mode's busy goroutines delay neither the poller's 1 ms timers nor the backends' answers;\n" +
			"--in-process runs both as goroutines of this process instead (the older, pessimistic numbers).",
		Flags: []cli.Flag{
			haproxyFlag(),
			&cli.IntFlag{Name: "routes", Usage: "routes the probe creates (0 skips the probe)", Value: 300, EnvVars: []string{"HAPTIC_BENCH_ROUTES"}},
			&cli.IntFlag{Name: "preload", Usage: "routes that exist before the probe starts (one file, applied first): the probe then measures adds at --preload..--preload+--routes routes"},
			&cli.StringFlag{Name: "cpuprofile", Usage: "write a CPU profile of this process, taken while the probe runs, to this file"},
			&cli.StringFlag{Name: "memprofile", Usage: "write a heap profile of this process (live objects, allocations since start) to this file when the probe ends"},
			&cli.StringFlag{Name: "plot", Usage: "draw the probe (latency by route index, p50 and p99 lines) as SVG into this file"},
			&cli.StringFlag{Name: "memprofile-peak", Usage: "write a heap profile of this process, taken when its live heap was highest, to this file"},
			&cli.StringFlag{Name: "pace", Usage: "how the probe spaces its route adds: back-to-back (each right after the previous first 200) or isolated (--debounce + 5ms after it)", Value: string(propagation.PaceBackToBack)},
			&cli.IntFlag{Name: "flips", Usage: "backend flips of the routechange scenario (0 skips it)", Value: 20},
			&cli.DurationFlag{Name: "flip-interval", Usage: "pause between two flips", Value: 200 * time.Millisecond},
			&cli.IntFlag{Name: "storm", Usage: "routes the storm scenario writes within about 100 ms (0 skips it)"},
			debounceFlag(),
			&cli.DurationFlag{Name: "min-reload-interval", Usage: "agent reload pacing (negative: none)", Value: -1},
			&cli.StringFlag{Name: "workdir", Usage: "local mode's work directory (HAProxy's tree, the agent's state); default: a temporary one, on /dev/shm when it is a tmpfs and TMPDIR is unset"},
			&cli.BoolFlag{Name: "in-process", Usage: "run the poller and the echo backends as goroutines of this process, not as child processes (local mode's work then delays them)"},
			idleGCFlag(),
			heapHeadroomFlag(),
			checkSpacingFlag(),
			&cli.StringFlag{Name: "log-level", Usage: "local mode's log level (debug, info, warn, error)", Value: "error"},
		},
		Action: func(c *cli.Context) error {
			bin, err := resolveHAProxy(c.String("haproxy"))
			if err != nil {
				return err
			}
			level := new(slog.LevelVar)
			if err := level.UnmarshalText([]byte(c.String("log-level"))); err != nil {
				return fmt.Errorf("log-level: %w", err)
			}
			var probe func(url string) []string
			var echo func(listen []string) []string
			if !c.Bool("in-process") {
				exe, err := os.Executable()
				if err != nil {
					return fmt.Errorf("benchmark child processes: %w", err)
				}
				probe = func(url string) []string { return []string{exe, "benchmark", "probe-client", "--url", url} }
				echo = func(listen []string) []string {
					argv := []string{exe, "benchmark", "echo-servers"}
					for _, l := range listen {
						argv = append(argv, "--listen", l)
					}
					return argv
				}
			}
			profiles := map[string]io.Writer{} // by flag; an unset flag's is nil
			for _, flag := range []string{"cpuprofile", "memprofile", "memprofile-peak"} {
				path := c.String(flag)
				if path == "" {
					continue
				}
				f, err := os.Create(path)
				if err != nil {
					return fmt.Errorf("%s: %w", flag, err)
				}
				defer func() { _ = f.Close() }()
				profiles[flag] = f
			}
			stopGovernor, err := startHeapGovernor(c)
			if err != nil {
				return err
			}
			defer stopGovernor()
			ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
			defer stop()
			res, err := propagation.Run(ctx, propagation.Config{
				Preload:           c.Int("preload"),
				CPUProfile:        profiles["cpuprofile"],
				HeapProfile:       profiles["memprofile"],
				PeakHeapProfile:   profiles["memprofile-peak"],
				ProbeCommand:      probe,
				EchoCommand:       echo,
				HAProxy:           bin,
				Routes:            c.Int("routes"),
				Pace:              propagation.Pace(c.String("pace")),
				Storm:             c.Int("storm"),
				Flips:             c.Int("flips"),
				FlipInterval:      c.Duration("flip-interval"),
				Debounce:          c.Duration("debounce"),
				MinReloadInterval: c.Duration("min-reload-interval"),
				Progress:          c.App.ErrWriter,
				Local: local.Config{
					Log:          slog.New(slog.NewTextHandler(c.App.ErrWriter, &slog.HandlerOptions{Level: level})),
					WorkDir:      c.String("workdir"),
					IdleGC:       c.Bool("idle-gc"),
					CheckSpacing: c.Duration("check-spacing"),
				},
			})
			if res != nil {
				printPropagation(c.App.Writer, res)
			}
			if err != nil {
				return err
			}
			if path := c.String("plot"); path != "" && res.Probe != nil {
				if err := writePlot(path, res); err != nil {
					return err
				}
			}
			if bad := propagationFailures(res); bad != "" {
				return cli.Exit("propagation: "+bad, 1)
			}
			return nil
		},
	}
}

// printPropagation prints the results beside the references, one
// "key value" line per number so that scripts can parse them.
func printPropagation(w io.Writer, r *propagation.Result) {
	fmt.Fprintf(w, "haproxy %s\ndebounce_ms %s\ncheck_spacing_ms %s\nworkdir %s\necho_servers %s\n", r.HAProxyVersion, ms(r.Debounce), ms(r.CheckSpacing), r.WorkDir, r.Echo)
	if p := r.Probe; p != nil {
		fmt.Fprintf(w, "probe_pace %s\nprobe_routes %d\nprobe_preloaded %d\n", p.Pace, p.Routes, p.Preloaded)
		fmt.Fprintf(w, "probe_poller %s\n", p.Poller)
		fmt.Fprintf(w, "probe_p50_ms %s\nprobe_p90_ms %s\nprobe_p99_ms %s\nprobe_max_ms %s\n",
			ms(p.Quantile(0.50)), ms(p.Quantile(0.90)), ms(p.Quantile(0.99)), ms(p.Quantile(1)))
		if tenths := p.MediansByTenth(); tenths != nil {
			fmt.Fprint(w, "probe_p50_ms_by_tenth")
			for _, d := range tenths {
				fmt.Fprintf(w, " %s", ms(d))
			}
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "probe_requests %d\nprobe_unexpected_answers %d\nprobe_reloads %d\n", p.Requests, len(p.Unexpected), p.Reloads)
		if n := uint64(len(p.Latencies)); n > 0 {
			fmt.Fprintf(w, "probe_alloc_kb_per_route %d\nprobe_gc_cycles %d\n", p.HeapAllocated/n>>10, p.GCCycles)
		}
		for i, a := range p.Unexpected {
			if i == 10 {
				fmt.Fprintf(w, "  … %d more\n", len(p.Unexpected)-i)
				break
			}
			fmt.Fprintf(w, "  unexpected %s %s: %d %s\n", a.At.UTC().Format("15:04:05.000"), a.Host, a.Status, a.Detail)
		}
	}
	if rc := r.RouteChange; rc != nil {
		fmt.Fprintf(w, "routechange_flips %d\nroutechange_requests %d\nroutechange_non200 %d\nroutechange_reloads %d\n",
			rc.Flips, rc.Requests, len(rc.NonOK), rc.Reloads)
		var served []string
		for k, v := range rc.Served {
			served = append(served, fmt.Sprintf("%s=%d", k, v))
		}
		fmt.Fprintf(w, "routechange_served %s\n", strings.Join(sorted(served), " "))
		for i, a := range rc.NonOK {
			if i == 10 {
				fmt.Fprintf(w, "  … %d more\n", len(rc.NonOK)-i)
				break
			}
			fmt.Fprintf(w, "  non-200 %s %s: %d %s\n", a.At.UTC().Format("15:04:05.000"), a.Host, a.Status, a.Detail)
		}
	}
	if st := r.Storm; st != nil {
		fmt.Fprintf(w, "storm_routes %d\nstorm_written_ms %s\nstorm_reconciliations %d\nstorm_settled_ms %s\nstorm_unserved %d\nstorm_unexpected_answers %d\nstorm_reloads %d\n",
			st.Routes, ms(st.Written), st.Reconciliations, ms(st.Settled), st.Unserved, len(st.Unexpected), st.Reloads)
		for i, a := range st.Unexpected {
			if i == 10 {
				fmt.Fprintf(w, "  … %d more\n", len(st.Unexpected)-i)
				break
			}
			fmt.Fprintf(w, "  unexpected %s %s: %d %s\n", a.At.UTC().Format("15:04:05.000"), a.Host, a.Status, a.Detail)
		}
	}
	if m := r.Memory; m != nil {
		fmt.Fprintf(w, "mem_routes %d\nmem_rss_MiB %s\nmem_anon_MiB %s\nmem_peak_rss_MiB %s\nmem_heap_live_MiB %s\nmem_heap_live_peak_MiB %s\nmem_heap_objects_peak_MiB %s\nmem_go_mapped_peak_MiB %s\n",
			m.Routes, mib(m.Steady), mib(m.SteadyAnon), mib(m.Peak), mib(int64(m.HeapLive)), mib(int64(m.HeapLivePeak)), mib(int64(m.HeapObjectsPeak)), mib(int64(m.MappedPeak)))
	}
	fmt.Fprintln(w, "\nroute add → served, for comparison:")
	if p := r.Probe; p != nil {
		fmt.Fprintf(w, "  HAPTIC (this run, %s)  p50 %s ms, p99 %s ms\n", p.Pace, ms(p.Quantile(0.5)), ms(p.Quantile(0.99)))
	}
	fmt.Fprintln(w, "  HAPTIC reference implementation ≈ 1 s tuned (seconds by default)")
	fmt.Fprintln(w, "  HAProxy Unified Gateway         ≈ 5 s")
	fmt.Fprintln(w, "  best xDS control plane          10–30 ms")
	fmt.Fprintln(w, "  target on HAProxy 3.4           p50 ≤ 10 ms, p99 ≤ 30 ms (N = 300 and N = 3,000)")
}

// propagationFailures names the results that must be zero and are not.
func propagationFailures(r *propagation.Result) string {
	var bad []string
	if p := r.Probe; p != nil && len(p.Unexpected) > 0 {
		bad = append(bad, fmt.Sprintf("%d probe answers were neither 404 nor 200", len(p.Unexpected)))
	}
	if rc := r.RouteChange; rc != nil && len(rc.NonOK) > 0 {
		bad = append(bad, fmt.Sprintf("%d routechange answers were not 200", len(rc.NonOK)))
	}
	if st := r.Storm; st != nil && len(st.Unexpected) > 0 {
		bad = append(bad, fmt.Sprintf("%d storm answers were neither 404 nor 200", len(st.Unexpected)))
	}
	if st := r.Storm; st != nil && st.Unserved > 0 {
		bad = append(bad, fmt.Sprintf("%d storm routes did not serve", st.Unserved))
	}
	return strings.Join(bad, "; ")
}

// writePlot draws the probe of r into path.
func writePlot(path string, r *propagation.Result) error {
	p := r.Probe
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	err = propagation.WriteSVG(f, propagation.Plot{
		Title: "Route add → first 200, haptic local (controller loop + agent + HAProxy)",
		Subtitle: fmt.Sprintf("HAProxy %s · %s · %d routes after %d preloaded · p50 %s ms, p99 %s ms · %s",
			r.HAProxyVersion, p.Pace, p.Routes, p.Preloaded, ms(p.Quantile(0.5)), ms(p.Quantile(0.99)), time.Now().UTC().Format("2006-01-02")),
		Latencies: p.InOrder,
		First:     p.Preloaded,
	})
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	return nil
}

// mib formats bytes as MiB with one decimal.
func mib(b int64) string { return fmt.Sprintf("%.1f", float64(b)/(1<<20)) }

func sorted(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}
