package deployplan_test

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/haptic-io/haptic/agentapi"
	"github.com/haptic-io/haptic/deployplan"
	"github.com/haptic-io/haptic/renderplan"
)

// bigPlan builds a plan with n dynamic backends of 2 servers each, routed
// by an n-entry host map; routeChanged moves one route to a new server
// set and a new backend value.
func bigPlan(tb testing.TB, n int, routeChanged bool) *renderplan.Plan {
	tb.Helper()
	b := renderplan.NewBuilder()
	b.Text("global\n    stats socket stats.sock mode 600 level admin\n\nfrontend fe\n    bind :8080\n    use_backend %[req.hdr(host),lower,map(maps/hosts.map)]\n\n")
	if err := b.Profile("web", []string{"mode http", "balance roundrobin"}); err != nil {
		tb.Fatal(err)
	}
	hosts := renderplan.Map{Path: "maps/hosts.map"}
	for i := range n {
		name := fmt.Sprintf("be_%05d", i)
		servers := []renderplan.Server{
			{Name: "pod-a", Address: fmt.Sprintf("10.%d.%d.1", i/250, i%250), Port: 8080, Weight: 1},
			{Name: "pod-b", Address: fmt.Sprintf("10.%d.%d.2", i/250, i%250), Port: 8080, Weight: 1},
		}
		value := name
		if routeChanged && i == n/2 {
			servers[1] = renderplan.Server{Name: "pod-c", Address: "10.255.0.3", Port: 8080, Weight: 1}
			value = fmt.Sprintf("be_%05d", i+1)
		}
		if err := b.Backend(renderplan.Backend{Name: name, GUID: "g-" + name, Profile: "web", Servers: servers}); err != nil {
			tb.Fatal(err)
		}
		hosts.Entries = append(hosts.Entries, renderplan.MapEntry{Key: fmt.Sprintf("h%05d.example.com", i), Value: value})
	}
	if err := b.Map(hosts); err != nil {
		tb.Fatal(err)
	}
	out, err := b.Build()
	if err != nil {
		tb.Fatal(err)
	}
	return out.Plan
}

// BenchmarkDiff5000 is Diff on 5,000 backends (10,000 servers, a
// 5,000-entry map) with one route changed: one server replaced and one map
// entry re-pointed. Target: ≤ 2 ms per op.
func BenchmarkDiff5000(b *testing.B) {
	base := bigPlan(b, 5000, false)
	next := bigPlan(b, 5000, true)
	bl := deployplan.Baseline{Plan: base, HAProxyVersion: "3.4.7-1", AgentOps: agentapi.OpKinds()}
	d := deployplan.Diff(next, bl)
	if d.Verdict != deployplan.VerdictRuntime || len(d.Ops) != 4 {
		b.Fatalf("unexpected decision:\n%s", d)
	}
	b.ReportAllocs()
	cpu0 := processCPU(b)
	for b.Loop() {
		deployplan.Diff(next, bl)
	}
	// Wall time per op suffers when other processes share the 2 cores;
	// CPU time per op (user+system of this process, which runs nothing
	// else during the loop) is the steadier number.
	b.ReportMetric(float64(processCPU(b)-cpu0)/float64(b.N), "cpu-ns/op")
}

func processCPU(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
