package rendergate_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/haptic-io/haptic/internal/haproxytest"
	"github.com/haptic-io/haptic/rendergate"
	"github.com/haptic-io/haptic/renderplan"
)

// bigOutput is a tree of n dynamic backends with 2 servers each, routed
// through a host map of n entries.
func bigOutput(b testing.TB, n int) *renderplan.Output {
	b.Helper()
	bld := outputBuilder(b, "")
	entries := []renderplan.MapEntry{{Key: "app.example.com", Value: "be_app"}}
	for i := range n - 1 {
		name := fmt.Sprintf("be_%04d", i)
		must(b, bld.Backend(renderplan.Backend{Name: name, GUID: name, Profile: "web", Servers: []renderplan.Server{
			{Name: "pod-a", Address: fmt.Sprintf("10.%d.%d.1", i/250, i%250), Port: 8080, Weight: 1},
			{Name: "pod-b", Address: fmt.Sprintf("10.%d.%d.2", i/250, i%250), Port: 8080, Weight: 1},
		}}))
		entries = append(entries, renderplan.MapEntry{Key: name + ".example.com", Value: name})
	}
	must(b, bld.Map(renderplan.Map{Path: "maps/all.map", Entries: entries}))
	return build(b, bld)
}

// BenchmarkCheck3000Backends times one HAProxyChecker.Check of a 3,000
// backend tree on HAProxy 3.4 (lay out, isolate, run haproxy -c -dr,
// remove), and reports as "ref-ns/op" a bare `haproxy -c -dr` of the same
// tree already on disk, measured in the same run, and the ratio "x-ref".
// Reference from the HAProxy facts: 103–108 ms for -c on 3.4.
func BenchmarkCheck3000Backends(b *testing.B) {
	bin := haproxytest.Binary(b, "3.4")
	out := bigOutput(b, 3000)
	c, err := rendergate.NewHAProxyChecker(rendergate.Config{Binary: bin, Timeout: time.Minute})
	must(b, err)
	if len(out.Plan.Backends) != 3000 {
		b.Fatalf("output has %d backends, want 3000", len(out.Plan.Backends))
	}

	// The reference runs between the checks, outside the timer, so that
	// both see the same machine load.
	dir := b.TempDir()
	for _, f := range out.Files {
		p := filepath.Join(dir, f.Path)
		must(b, os.MkdirAll(filepath.Dir(p), 0o755))
		must(b, os.WriteFile(p, f.Body, 0o644))
	}
	var refTotal time.Duration
	for b.Loop() {
		b.StopTimer()
		start := time.Now()
		cmd := exec.Command(bin, "-c", "-dr", "-f", renderplan.ConfigPath)
		cmd.Dir = dir
		if msg, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("reference haproxy -c: %v\n%s", err, msg)
		}
		refTotal += time.Since(start)
		b.StartTimer()
		if err := c.Check(context.Background(), out); err != nil {
			b.Fatal(err)
		}
	}
	perOp := b.Elapsed() / time.Duration(b.N)
	refPerOp := refTotal / time.Duration(b.N)
	b.ReportMetric(float64(refPerOp.Nanoseconds()), "ref-ns/op")
	b.ReportMetric(float64(perOp)/float64(refPerOp), "x-ref")
	b.Logf("isolated=%v run-as=%+v: check %v/op, bare haproxy -c %v/op", c.NetworkIsolated(), c.RunAs(), perOp, refPerOp)
}
