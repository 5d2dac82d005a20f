package deployplan_test

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/haptic-io/haptic/agentapi/runtimeop"
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
	bl := deployplan.Baseline{Plan: base, HAProxyVersion: "3.4.7-1", AgentOps: runtimeop.OpKinds()}
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

// routeInputs are the NewOutput arguments of a plan with n dynamic backends
// (2 servers each) routed by three unordered maps (hosts, paths, sni:
// one entry per backend each). With added, one more backend and its three
// entries are in, the shape of a route add. Unchanged backends and maps
// keep their slices from prev (nil: build all afresh), as a controller
// rendering the same objects again would hand them to a renderplan.Cache.
type routeInputs struct {
	pieces   []renderplan.Piece
	profiles []renderplan.Profile
	backends []renderplan.Backend
	maps     []renderplan.Map
}

func newRouteInputs(n int, added bool, prev *routeInputs) *routeInputs {
	in := &routeInputs{
		pieces: []renderplan.Piece{
			{Kind: renderplan.SectionCore, Text: "global\n    stats socket stats.sock mode 600 level admin\n\nfrontend fe\n    bind :8080\n    use_backend %[req.hdr(host),lower,map(maps/hosts.map)]\n\n"},
			{Kind: renderplan.SectionProfile, Name: "web", Text: renderplan.ProfileText("web", []string{"mode http", "balance roundrobin"})},
		},
		profiles: []renderplan.Profile{{Name: "web", Mode: "http"}},
	}
	total := n
	if added {
		total++
	}
	hosts := renderplan.Map{Path: "maps/hosts.map"}
	paths := renderplan.Map{Path: "maps/paths.map"}
	sni := renderplan.Map{Path: "maps/sni.map"}
	for i := range total {
		name := fmt.Sprintf("be_%05d", i)
		if i == n { // the added route sorts among the others
			name = fmt.Sprintf("be_%05d_new", n/2)
		}
		in.pieces = append(in.pieces, renderplan.Piece{Kind: renderplan.SectionBackend, Name: name})
		if prev != nil && i < len(prev.backends) && prev.backends[i].Name == name {
			in.backends = append(in.backends, prev.backends[i])
		} else {
			in.backends = append(in.backends, renderplan.Backend{Name: name, GUID: "g-" + name, Profile: "web", Servers: []renderplan.Server{
				{Name: "pod-a", Address: fmt.Sprintf("10.%d.%d.1", i/250, i%250), Port: 8080, Weight: 1},
				{Name: "pod-b", Address: fmt.Sprintf("10.%d.%d.2", i/250, i%250), Port: 8080, Weight: 1},
			}})
		}
		hosts.Entries = append(hosts.Entries, renderplan.MapEntry{Key: name + ".example.com", Value: name})
		paths.Entries = append(paths.Entries, renderplan.MapEntry{Key: "api.example.com/" + name, Value: name})
		sni.Entries = append(sni.Entries, renderplan.MapEntry{Key: name + ".tls.example.com", Value: name})
	}
	in.maps = []renderplan.Map{hosts, paths, sni}
	if prev != nil && !added {
		in.maps = prev.maps
	}
	return in
}

// routePlans returns a base plan of n backends and the next one, with
// one route added or none, built afresh (shared: false) or by one
// renderplan.Cache like the controller's (shared: true), which shares unchanged
// backends' servers and maps' entries between the two plans.
func routePlans(tb testing.TB, n int, added, shared bool) (base, next *renderplan.Plan) {
	tb.Helper()
	build := func(c *renderplan.Cache, in *routeInputs) *renderplan.Plan {
		var out *renderplan.Output
		var err error
		if c != nil {
			out, err = c.NewOutput(in.pieces, in.profiles, in.backends, in.maps, nil)
		} else {
			out, err = renderplan.NewOutput(in.pieces, in.profiles, in.backends, in.maps, nil)
		}
		if err != nil {
			tb.Fatal(err)
		}
		return out.Plan
	}
	first := newRouteInputs(n, false, nil)
	if !shared {
		return build(nil, first), build(nil, newRouteInputs(n, added, nil))
	}
	var c renderplan.Cache
	base = build(&c, first)
	next = build(&c, newRouteInputs(n, added, first))
	return base, next
}

// BenchmarkDiffRouteAdd is Diff on the critical path of a route add:
// 3,000 or 5,000 dynamic backends (2 servers each) and three maps of one
// entry per backend, where one backend and its three map entries are
// added ("added") or nothing changed ("unchanged"), with plans built
// afresh or by one renderplan.Cache ("shared").
func BenchmarkDiffRouteAdd(b *testing.B) {
	for _, n := range []int{3000, 5000} {
		for _, added := range []bool{true, false} {
			for _, shared := range []bool{false, true} {
				name := fmt.Sprintf("backends=%d/added=%t/shared=%t", n, added, shared)
				b.Run(name, func(b *testing.B) {
					base, next := routePlans(b, n, added, shared)
					bl := deployplan.Baseline{Plan: base, HAProxyVersion: "3.4.7-1", AgentOps: runtimeop.OpKinds()}
					d := deployplan.Diff(next, bl)
					switch {
					case added && (d.Verdict != deployplan.VerdictRuntime || len(d.Ops) != 9):
						b.Fatalf("route add: unexpected decision:\n%s", d)
					case !added && d.Verdict != deployplan.VerdictNoop:
						b.Fatalf("no change: unexpected decision:\n%s", d)
					}
					b.ReportAllocs()
					cpu0 := processCPU(b)
					for b.Loop() {
						deployplan.Diff(next, bl)
					}
					b.ReportMetric(float64(processCPU(b)-cpu0)/float64(b.N), "cpu-ns/op")
				})
			}
		}
	}
}

func processCPU(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
