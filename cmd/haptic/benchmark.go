package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/haptic-io/haptic/store"
	"github.com/haptic-io/haptic/templating"
	"github.com/haptic-io/haptic/templating/fixtures"
)

// referenceMillis are the reference implementation's full-render times for
// the same object mix (issue 3), shown beside ours.
var referenceMillis = map[int]float64{100: 15, 1000: 113, 5000: 742}

func benchmarkCommand() *cli.Command {
	return &cli.Command{
		Name:  "benchmark",
		Usage: "time full renders, and re-renders after one change, of generated Ingress fixtures",
		Description: "Generates, per size, N steps of 1 Ingress + 1 Service + 2 EndpointSlices\n" +
			"(templating/fixtures.GenerateIngressMix: 2 paths per Ingress, 2 endpoints per slice), renders them once to warm up, then --iterations times, and\n" +
			"prints one header line and one row per size (median times), then the 5000/1000 ratio.\n" +
			"Timed renders are full renders (RenderOptions.Fresh: nothing reused from earlier renders).\n" +
			"Columns: total_ms (wall), cpu_ms (process CPU per render, steadier on a busy machine),\n" +
			"rerender_ms (wall, median of --iterations: one Ingress changed, a new snapshot, and a render\n" +
			"that replays what did not change, and its plan ID, as the controller does after every change),\n" +
			"first_ms (the untimed warm-up render: the first render of a fresh store snapshot, which\n" +
			"also sorts the ListBy lists that later renders of the same snapshot reuse),\n" +
			"per_ingress_us, haproxy_cfg_ms (the haproxy.cfg template, which includes the libraries'\n" +
			"per-object pass that fills the maps with mapEntry), maps_ms (map templates), rest_ms\n" +
			"(assembly, plan build, validation), the reference implementation's time and our speedup.\n" +
			"Without -c the stock libraries alone are rendered.",
		Subcommands: []*cli.Command{benchmarkPropagationCommand(), benchmarkProbeClientCommand(), benchmarkEchoServersCommand()},
		Flags: []cli.Flag{
			configFlag(false),
			librariesFlag(),
			&cli.StringFlag{Name: "objects", Usage: "comma-separated numbers of Ingresses", Value: "100,1000,5000", EnvVars: []string{"HAPTIC_BENCH_OBJECTS"}},
			&cli.IntFlag{Name: "iterations", Usage: "timed renders per size (median reported)", Value: 5, EnvVars: []string{"HAPTIC_BENCH_ITERATIONS"}},
		},
		Action: func(c *cli.Context) error {
			sizes, err := parseObjects(c.String("objects"))
			if err != nil {
				return err
			}
			iters := c.Int("iterations")
			if iters < 1 || iters > 1000 {
				return fmt.Errorf("iterations %d out of range 1..1000", iters)
			}
			cfg, err := loadConfig(c.String("libraries"), c.String("config"))
			if err != nil {
				return err
			}
			rows := make([]benchRow, 0, len(sizes))
			for _, n := range sizes {
				row, err := benchSize(c.Context, cfg, n, iters)
				if err != nil {
					return err
				}
				rows = append(rows, row)
			}
			return printBench(c.App.Writer, rows)
		},
	}
}

// benchRow is the median timing of one size.
type benchRow struct {
	Objects   int
	Total     time.Duration // whole Engine.Render, wall clock
	CPU       time.Duration // process CPU time (user+system) per render
	First     time.Duration // the warm-up render (first of this snapshot), wall clock
	Rerender  time.Duration // a render after one Ingress changed, wall clock
	Config    time.Duration // the haproxy.cfg template
	Maps      time.Duration // all map templates
	Rest      time.Duration // the rest: other templates, assembly, plan build and validation
	Files     int
	Backends  int
	Problems  int
	OutputLen int
}

// benchSize renders n generated steps iters times (after one warm-up) and
// returns the median of each measure.
func benchSize(ctx context.Context, cfg *templating.Config, n, iters int) (benchRow, error) {
	st, err := storeFromObjects(cfg.WatchedResources, fixtures.GenerateIngressMix(n))
	if err != nil {
		return benchRow{}, err
	}
	snap := st.Snapshot()
	engine, err := templating.Compile(cfg)
	if err != nil {
		return benchRow{}, err
	}
	var total, cfgT, mapsT, restT []time.Duration
	var cpuStart time.Duration
	var last benchRow
	for i := -1; i < iters; i++ {
		var tr phaseTimer
		start := time.Now()
		out, problems, err := engine.Render(ctx, snap, templating.RenderOptions{Trace: tr.event, Fresh: true})
		elapsed := time.Since(start)
		if err != nil {
			return benchRow{}, fmt.Errorf("benchmark %d objects: %w", n, err)
		}
		if i < 0 { // warm-up
			cpuStart = processCPU()
			size := 0
			for _, f := range out.Files {
				size += len(f.Body)
			}
			last = benchRow{First: elapsed, Files: len(out.Files), Backends: len(out.Plan.Backends), Problems: len(problems), OutputLen: size}
			continue
		}
		total = append(total, elapsed)
		cfgT = append(cfgT, tr.config)
		mapsT = append(mapsT, tr.maps)
		restT = append(restT, elapsed-tr.config-tr.maps)
	}
	last.Objects = n
	last.CPU = (processCPU() - cpuStart) / time.Duration(iters)
	last.Total, last.Config, last.Maps, last.Rest = median(total), median(cfgT), median(mapsT), median(restT)
	if last.Rerender, err = benchRerender(ctx, engine, st, n, iters); err != nil {
		return benchRow{}, err
	}
	return last, nil
}

// benchRerender changes one Ingress of the mix iters times (its host
// flips), each time taking a snapshot and rendering with engine, and
// returns the median time of snapshot plus render.
func benchRerender(ctx context.Context, engine *templating.Engine, st *store.Memory, n, iters int) (time.Duration, error) {
	ing, ok := st.Get("ingresses", fmt.Sprintf("ns-%d", (n/2)%fixtures.Namespaces), fmt.Sprintf("app-%d", n/2))
	if !ok {
		return 0, fmt.Errorf("benchmark %d objects: no Ingress app-%d under alias ingresses", n, n/2)
	}
	var took []time.Duration
	for i := range iters {
		changed, err := withRuleHost(ing, fmt.Sprintf("changed-%d.example.com", i%2), strconv.Itoa(i))
		if err != nil {
			return 0, err
		}
		start := time.Now()
		if err := st.Update("ingresses", changed); err != nil {
			return 0, err
		}
		out, _, err := engine.Render(ctx, st.Snapshot(), templating.RenderOptions{})
		if err != nil {
			return 0, fmt.Errorf("benchmark %d objects: re-render: %w", n, err)
		}
		_ = out.ID() // the controller needs it (computed in the background)
		took = append(took, time.Since(start))
	}
	return median(took), nil
}

// withRuleHost returns a copy of a reference-mix Ingress whose first rule
// has the given host, with resourceVersion rv.
func withRuleHost(ing map[string]any, host, rv string) (map[string]any, error) {
	md, _ := ing["metadata"].(map[string]any)
	spec, _ := ing["spec"].(map[string]any)
	rules, _ := spec["rules"].([]any)
	if md == nil || len(rules) == 0 {
		return nil, errors.New("benchmark: the Ingress has no metadata or rules")
	}
	rule, _ := rules[0].(map[string]any)
	rule = maps.Clone(rule)
	rule["host"] = host
	spec = maps.Clone(spec)
	spec["rules"] = append([]any{rule}, rules[1:]...)
	md = maps.Clone(md)
	md["resourceVersion"] = rv
	out := maps.Clone(ing)
	out["metadata"], out["spec"] = md, spec
	return out, nil
}

// phaseTimer sums the time spent in top-level templates by kind.
type phaseTimer struct {
	start        time.Time
	config, maps time.Duration
}

func (p *phaseTimer) event(ev templating.TraceEvent) {
	if ev.Depth != 0 {
		return
	}
	if !ev.End {
		p.start = time.Now()
		return
	}
	d := time.Since(p.start)
	switch {
	case ev.Template == "haproxy.cfg":
		p.config += d
	case strings.HasPrefix(ev.Template, "map:"):
		p.maps += d
	}
}

// processCPU is the process's user+system CPU time so far. On a shared
// machine it is steadier than the wall clock; it includes the garbage
// collector's work on other threads.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// storeFromObjects files objs under every alias watching their apiVersion
// and kind, as store.LoadDir does for manifests.
func storeFromObjects(resources map[string]store.WatchedResource, objs []map[string]any) (*store.Memory, error) {
	st, err := store.NewMemory(resources)
	if err != nil {
		return nil, err
	}
	for _, obj := range objs {
		apiVersion, _ := obj["apiVersion"].(string)
		kind, _ := obj["kind"].(string)
		for alias, wr := range resources {
			if wr.APIVersion == apiVersion && wr.Resource == store.ResourceForKind(kind) {
				if err := st.Add(alias, obj); err != nil {
					return nil, err
				}
			}
		}
	}
	return st, nil
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f", float64(d)/float64(time.Millisecond)) }

// printBench writes the table: one header line, one row per size, then the
// 5000/1000 ratio line when both sizes were run.
func printBench(w io.Writer, rows []benchRow) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "objects\ttotal_ms\tcpu_ms\tfirst_ms\trerender_ms\tper_ingress_us\thaproxy_cfg_ms\tmaps_ms\trest_ms\treference_ms\tspeedup\tbackends\tproblems\tbytes")
	byN := map[int]benchRow{}
	for _, r := range rows {
		byN[r.Objects] = r
		ref, speedup := "-", "-"
		if v, ok := referenceMillis[r.Objects]; ok {
			ref = fmt.Sprintf("%.0f", v)
			speedup = fmt.Sprintf("%.1fx", v/(float64(r.Total)/float64(time.Millisecond)))
		}
		perIng := float64(r.Total) / float64(time.Microsecond) / float64(r.Objects)
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%.2f\t%s\t%s\t%s\t%s\t%s\t%d\t%d\t%d\n",
			r.Objects, ms(r.Total), ms(r.CPU), ms(r.First), ms(r.Rerender), perIng, ms(r.Config), ms(r.Maps), ms(r.Rest), ref, speedup, r.Backends, r.Problems, r.OutputLen)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	k1, ok1 := byN[1000]
	k5, ok5 := byN[5000]
	if ok1 && ok5 {
		_, err := fmt.Fprintf(w, "ratio_5000_1000 %.2f (reference %.2f, target <= 6)\n",
			float64(k5.Total)/float64(k1.Total), referenceMillis[5000]/referenceMillis[1000])
		return err
	}
	return nil
}
