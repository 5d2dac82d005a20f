package templating_test

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/haptic-io/haptic/store"
	"github.com/haptic-io/haptic/templating"
	"github.com/haptic-io/haptic/templating/fixtures"
)

func benchmarkRender(b *testing.B, n int) {
	cfg, err := templating.LoadConfig("testdata/bench.yaml")
	if err != nil {
		b.Fatal(err)
	}
	e, err := templating.Compile(cfg)
	if err != nil {
		b.Fatal(err)
	}
	st, err := store.NewMemory(cfg.WatchedResources)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := st.AddObjects(fixtures.GenerateIngressMix(n)...); err != nil {
		b.Fatal(err)
	}
	snap := st.Snapshot()
	ctx := context.Background()
	out, problems, err := e.Render(ctx, snap, templating.RenderOptions{})
	if err != nil {
		b.Fatal(err)
	}
	if len(problems) > 0 || len(out.Plan.Backends) != n {
		b.Fatalf("got %d backends and problems %v, want %d backends", len(out.Plan.Backends), problems, n)
	}
	b.ReportAllocs()
	cpu0 := processCPU()
	b.ResetTimer()
	for b.Loop() {
		if _, _, err := e.Render(ctx, snap, templating.RenderOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/ingress")
	// CPU time of the whole process (all threads, GC included) per render:
	// on a loaded machine it moves much less than wall time.
	b.ReportMetric(float64((processCPU()-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
}

// processCPU returns the user+system CPU time the process used so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func BenchmarkRender100(b *testing.B)  { benchmarkRender(b, 100) }
func BenchmarkRender1000(b *testing.B) { benchmarkRender(b, 1000) }
func BenchmarkRender5000(b *testing.B) { benchmarkRender(b, 5000) }
