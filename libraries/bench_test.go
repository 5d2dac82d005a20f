package libraries_test

import (
	"context"
	"fmt"
	"maps"
	"syscall"
	"testing"
	"time"

	"github.com/haptic-io/haptic/store"
	"github.com/haptic-io/haptic/templating"
	"github.com/haptic-io/haptic/templating/fixtures"
)

// BenchmarkRenderIngresses renders the reference mix (1 Ingress, 1 Service,
// 2 EndpointSlices per step) with the stock libraries. Targets on the
// 2-core dev machine: 100 ≤ 3 ms, 1,000 ≤ 30 ms, 5,000 ≤ 150 ms per op.
func BenchmarkRenderIngresses(b *testing.B) {
	for _, n := range []int{100, 1000, 5000} {
		b.Run(fmt.Sprintf("ingresses=%d", n), func(b *testing.B) {
			engine, snap := benchEngine(b, n)
			ctx := context.Background()
			b.ReportAllocs()
			cpu0 := processCPU()
			b.ResetTimer()
			for b.Loop() {
				if _, _, err := engine.Render(ctx, snap, templating.RenderOptions{Fresh: true}); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/float64(n), "µs/ingress")
			// CPU time of the whole process (all threads, GC included) per
			// render: on a loaded machine it moves much less than wall time.
			b.ReportMetric(float64((processCPU()-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
		})
	}
}

func benchEngine(tb testing.TB, n int) (*templating.Engine, templating.Store) {
	tb.Helper()
	cfg := stockConfig(tb)
	st := storeOf(tb, cfg, fixtures.GenerateIngressMix(n))
	engine, err := templating.Compile(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	return engine, st.Snapshot()
}

// processCPU returns the user+system CPU time the process used so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkRerenderOneChange measures what the controller pays per object
// change: one Ingress of the reference mix changes (its host flips), the
// store takes a new snapshot and the same engine renders again, plan ID
// included. DESIGN.md §8's target is ≤ 5 ms at 5,000 Ingresses.
func BenchmarkRerenderOneChange(b *testing.B) {
	for _, n := range []int{300, 3000, 5000} {
		b.Run(fmt.Sprintf("ingresses=%d", n), func(b *testing.B) {
			cfg := stockConfig(b)
			objs := fixtures.GenerateIngressMix(n)
			st := storeOf(b, cfg, objs)
			engine, err := templating.Compile(cfg)
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			if _, _, err := engine.Render(ctx, st.Snapshot(), templating.RenderOptions{}); err != nil {
				b.Fatal(err)
			}
			changing := objs[4*(n/2)] // an Ingress in the middle of the list
			b.ReportAllocs()
			cpu0 := processCPU()
			i := 0
			for b.Loop() {
				i++
				if err := st.Update("ingresses", withHost(changing, fmt.Sprintf("changed-%d.example.com", i%2))); err != nil {
					b.Fatal(err)
				}
				out, _, err := engine.Render(ctx, st.Snapshot(), templating.RenderOptions{})
				if err != nil {
					b.Fatal(err)
				}
				_ = out.ID() // the controller needs it: a renderplan.Cache computes it in the background
			}
			b.ReportMetric(float64((processCPU()-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
		})
	}
}

// BenchmarkRerenderOneChangeGrown is BenchmarkRerenderOneChange at 3,000
// Ingresses on engines holding the same objects: "bulk" rendered them in
// one go; "grown" rendered after each Ingress (with its Service and
// EndpointSlices) was added, as a controller does when routes come one by
// one; "grown-compacted" is grown after an Engine.Compact, which the
// controller calls after each reconciliation. The grown engine's plan
// cache holds the same entries, made one route add at a time among that
// add's garbage, so its walks over every backend touch memory all over
// the heap: on the 2-core dev machine grown took 6.4-10.6 ms per op,
// grown-compacted 4.9-7.4 and bulk 5.3-6.9 (runs of 200 ops over an
// afternoon). It is the gap the propagation benchmark's full N = 3,000
// curve showed against its --preload runs.
func BenchmarkRerenderOneChangeGrown(b *testing.B) {
	const n = 3000
	for _, mode := range []string{"bulk", "grown", "grown-compacted"} {
		b.Run(mode, func(b *testing.B) {
			cfg := stockConfig(b)
			objs := fixtures.GenerateIngressMix(n)
			engine, err := templating.Compile(cfg)
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			render := func(st *store.Memory) {
				out, _, err := engine.Render(ctx, st.Snapshot(), templating.RenderOptions{})
				if err != nil {
					b.Fatal(err)
				}
				_ = out.ID()
			}
			st := storeOf(b, cfg, nil)
			if mode != "bulk" {
				for i := range n { // the mix is 4 objects per step
					addObjects(b, cfg, st, objs[4*i:4*i+4])
					render(st)
				}
				if mode == "grown-compacted" && !engine.Compact() {
					b.Fatal("Compact did nothing after 3,000 new backends")
				}
			} else {
				addObjects(b, cfg, st, objs)
				render(st)
			}
			changing := objs[4*(n/2)] // an Ingress in the middle of the list
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				i++
				if err := st.Update("ingresses", withHost(changing, fmt.Sprintf("changed-%d.example.com", i%2))); err != nil {
					b.Fatal(err)
				}
				render(st)
			}
		})
	}
}

// withHost returns a copy of the reference-mix Ingress ing whose rule has
// the given host (and a new resourceVersion).
func withHost(ing map[string]any, host string) map[string]any {
	md := maps.Clone(ing["metadata"].(map[string]any))
	md["resourceVersion"] = host
	spec := maps.Clone(ing["spec"].(map[string]any))
	rule := maps.Clone(spec["rules"].([]any)[0].(map[string]any))
	rule["host"] = host
	spec["rules"] = []any{rule}
	out := maps.Clone(ing)
	out["metadata"], out["spec"] = md, spec
	return out
}
