package renderplan_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/haptic-io/haptic/renderplan"
)

// The plan of 5,000 dynamic backends with 2 servers each, a 5,000-entry
// host map and core text: the reference "large" cluster.
const benchBackends = 5000

// BenchmarkPlanID5000 measures Plan.ID (canonical encoding + digest).
func BenchmarkPlanID5000(b *testing.B) {
	p := bigOutput(b, benchBackends).Plan
	enc, _ := p.Encode()
	b.SetBytes(int64(len(enc)))
	b.ReportAllocs()
	for b.Loop() {
		if p.ID() == "" {
			b.Fatal("empty ID")
		}
	}
}

// BenchmarkNewOutput5000 measures assembling the output: rendering every
// backend section, digests, sorting and validation.
func BenchmarkNewOutput5000(b *testing.B) {
	pieces, profiles, backends, maps := bigInputs(benchBackends)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := renderplan.NewOutput(pieces, profiles, backends, maps, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkNewOutput5000Sorted is BenchmarkNewOutput5000 with the backends
// (and their pieces) in name order, as templates usually emit them: no
// sorting needed.
func BenchmarkNewOutput5000Sorted(b *testing.B) {
	pieces, profiles, backends, maps := bigInputs(benchBackends)
	slices.SortFunc(backends, func(x, y renderplan.Backend) int { return strings.Compare(x.Name, y.Name) })
	for i, be := range backends {
		pieces[2+i] = renderplan.Piece{Kind: renderplan.SectionBackend, Name: be.Name}
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := renderplan.NewOutput(pieces, profiles, backends, maps, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkClone5000 measures Plan.Clone.
func BenchmarkClone5000(b *testing.B) {
	p := bigOutput(b, benchBackends).Plan
	b.ReportAllocs()
	for b.Loop() {
		if p.Clone() == nil {
			b.Fatal("nil clone")
		}
	}
}

// BenchmarkValidate5000 measures Plan.Validate alone.
func BenchmarkValidate5000(b *testing.B) {
	p := bigOutput(b, benchBackends).Plan
	b.ReportAllocs()
	for b.Loop() {
		if err := p.Validate(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecode5000 measures Decode of the canonical encoding.
func BenchmarkDecode5000(b *testing.B) {
	enc, _ := bigOutput(b, benchBackends).Plan.Encode()
	b.SetBytes(int64(len(enc)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := renderplan.Decode(enc); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEqual5000 measures Equal of two equal plans (the worst case).
func BenchmarkEqual5000(b *testing.B) {
	p := bigOutput(b, benchBackends).Plan
	q := p.Clone()
	b.ReportAllocs()
	for b.Loop() {
		if !p.Equal(q) {
			b.Fatal("not equal")
		}
	}
}

// threeMapInputs is bigInputs(n) with the host map replaced by three maps
// of n entries each (hosts, paths, redirects: ~3n entries, as the route
// benchmark of `haptic local` has). With sorted, every map's entries come
// sorted by key, as the template assembler hands them over; otherwise
// they come in a fixed shuffled order and NewOutput sorts them.
func threeMapInputs(n int, sorted bool) ([]renderplan.Piece, []renderplan.Profile, []renderplan.Backend, []renderplan.Map) {
	pieces, profiles, backends, _ := bigInputs(n)
	r := rand.New(rand.NewPCG(5, 6))
	maps := make([]renderplan.Map, 3)
	for k, path := range []string{"maps/hosts.map", "maps/paths.map", "maps/redirects.map"} {
		entries := make([]renderplan.MapEntry, n)
		for i, be := range backends {
			entries[i] = renderplan.MapEntry{Key: fmt.Sprintf("svc%04d.ns%02d.example.com/%d", i, i%97, k), Value: be.Name}
		}
		if sorted {
			slices.SortFunc(entries, func(x, y renderplan.MapEntry) int { return strings.Compare(x.Key, y.Key) })
		} else {
			r.Shuffle(n, func(i, j int) { entries[i], entries[j] = entries[j], entries[i] })
		}
		maps[k] = renderplan.Map{Path: path, Entries: entries}
	}
	return pieces, profiles, backends, maps
}

// BenchmarkNewOutput5000ThreeMaps measures NewOutput with three 5,000-entry
// maps whose entries need sorting.
func BenchmarkNewOutput5000ThreeMaps(b *testing.B) {
	pieces, profiles, backends, maps := threeMapInputs(benchBackends, false)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := renderplan.NewOutput(pieces, profiles, backends, maps, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkNewOutput5000ThreeMapsSorted is BenchmarkNewOutput5000ThreeMaps
// with every map's entries already sorted by key: the case of a template
// assembler that keeps map entries in order across renders.
func BenchmarkNewOutput5000ThreeMapsSorted(b *testing.B) {
	pieces, profiles, backends, maps := threeMapInputs(benchBackends, true)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := renderplan.NewOutput(pieces, profiles, backends, maps, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPlanID5000ThreeMaps measures Plan.ID of the plan with three
// 5,000-entry maps.
func BenchmarkPlanID5000ThreeMaps(b *testing.B) {
	pieces, profiles, backends, maps := threeMapInputs(benchBackends, true)
	out, err := renderplan.NewOutput(pieces, profiles, backends, maps, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if out.Plan.ID() == "" {
			b.Fatal("empty ID")
		}
	}
}

// appendedInputs is threeMapInputs(n, true) with backends sorted by name
// except the last added ones, and each map's entries sorted except the
// last added ones: what a template assembler that keeps earlier routes
// in order hands over after added routes were rendered.
func appendedInputs(n, added int) ([]renderplan.Piece, []renderplan.Profile, []renderplan.Backend, []renderplan.Map) {
	pieces, profiles, backends, maps := threeMapInputs(n, true)
	r := rand.New(rand.NewPCG(7, 8))
	perm := r.Perm(n)
	isNew := make([]bool, n)
	for _, i := range perm[:added] {
		isNew[i] = true
	}
	appendNew := func(dst, src []renderplan.Backend) []renderplan.Backend {
		for i := range src {
			if isNew[i] {
				dst = append(dst, src[i])
			}
		}
		return dst
	}
	old := make([]renderplan.Backend, 0, n)
	for i := range backends {
		if !isNew[i] {
			old = append(old, backends[i])
		}
	}
	slices.SortFunc(old, func(x, y renderplan.Backend) int { return strings.Compare(x.Name, y.Name) })
	backends = appendNew(old, backends)
	for k := range maps {
		e := maps[k].Entries // sorted by key
		var head, tail []renderplan.MapEntry
		for i := range e {
			if isNew[perm[i]] {
				tail = append(tail, e[i])
			} else {
				head = append(head, e[i])
			}
		}
		maps[k].Entries = append(head, tail...)
	}
	return pieces, profiles, backends, maps
}

// BenchmarkNewOutput5000Appended measures NewOutput when 150 routes were
// added to 5,000: backends and map entries sorted but for 150 at the end.
func BenchmarkNewOutput5000Appended(b *testing.B) {
	pieces, profiles, backends, maps := appendedInputs(benchBackends, 150)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := renderplan.NewOutput(pieces, profiles, backends, maps, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRouteAdd measures a build after one route was added to n
// (3,000 or 5,000 backends, three maps of n entries each): one new
// backend and one new entry in each map, every other backend and its
// slices unchanged, as a render after a route add hands them over.
// NewOutput builds from scratch; Cache reuses the previous build. Each
// build's plan ID is taken right after it, so that a Cache's
// background computation of it counts in full.
// Every 100 builds the inputs go back to n routes (untimed, the cache
// rebuilt), so the size stays near n.
func BenchmarkRouteAdd(b *testing.B) {
	for _, n := range []int{3000, 5000} {
		for _, cached := range []bool{false, true} {
			name := fmt.Sprintf("backends=%d/NewOutput", n)
			if cached {
				name = fmt.Sprintf("backends=%d/Cache", n)
			}
			b.Run(name, func(b *testing.B) { benchRouteAdd(b, n, cached) })
		}
	}
}

func benchRouteAdd(b *testing.B, n int, cached bool) {
	// Backends and their pieces in name order, map entries sorted: as
	// the template assembler hands over what it rendered before.
	pieces0, profiles, backends0, maps0 := threeMapInputs(n, true)
	slices.SortFunc(backends0, func(x, y renderplan.Backend) int { return strings.Compare(x.Name, y.Name) })
	for i, be := range backends0 {
		pieces0[2+i] = renderplan.Piece{Kind: renderplan.SectionBackend, Name: be.Name}
	}
	var c renderplan.Cache
	build := renderplan.NewOutput
	if cached {
		build = c.NewOutput
	}
	var pieces []renderplan.Piece
	var backends []renderplan.Backend
	var maps []renderplan.Map
	added := 0
	reset := func() {
		pieces, backends, maps, added = pieces0, backends0, maps0, 0
		if cached {
			c = renderplan.Cache{}
			if _, err := build(pieces, profiles, backends, maps, nil); err != nil {
				b.Fatal(err)
			}
		}
	}
	reset()
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		if added == 100 {
			reset()
		}
		pieces, backends, maps = addRoute(pieces, backends, maps, added)
		added++
		b.StartTimer()
		out, err := build(pieces, profiles, backends, maps, nil)
		if err != nil {
			b.Fatal(err)
		}
		_ = out.ID()
	}
}

// addRoute returns the inputs with route i added: a backend with two
// servers (and its piece, before the closing core piece) and one entry
// per map, in new slices; everything else is shared with the old inputs.
// The backend sorts after the others, as in the template assembler,
// which passes the backends of earlier renders first, by name.
func addRoute(pieces []renderplan.Piece, backends []renderplan.Backend, maps []renderplan.Map, i int) ([]renderplan.Piece, []renderplan.Backend, []renderplan.Map) {
	name := fmt.Sprintf("be_route_%05d", i)
	be := renderplan.Backend{
		Name: name, GUID: "haptic-" + name, Profile: backends[0].Profile,
		Servers: []renderplan.Server{
			{Name: "route-a", Address: "10.200.0.1", Port: 8080, Weight: 1},
			{Name: "route-b", Address: "10.200.0.2", Port: 8080, Weight: 1, Check: true},
		},
	}
	backends = append(slices.Clip(backends), be)
	last := len(pieces) - 1
	pieces = append(append(slices.Clone(pieces[:last]), renderplan.Piece{Kind: renderplan.SectionBackend, Name: name}), pieces[last])
	maps = slices.Clone(maps)
	for k := range maps {
		// In key order, in a new slice, as a renderEach fold hands them.
		e := renderplan.MapEntry{Key: fmt.Sprintf("svc%04d.ns%02d.example.com/%d-route", i, i%97, k), Value: name}
		at, _ := slices.BinarySearchFunc(maps[k].Entries, e.Key, func(x renderplan.MapEntry, key string) int { return strings.Compare(x.Key, key) })
		maps[k].Entries = slices.Insert(slices.Clone(maps[k].Entries), at, e)
	}
	return pieces, backends, maps
}
