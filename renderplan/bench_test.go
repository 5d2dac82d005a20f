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

// BenchmarkNewPlan5000 measures assembling the output: rendering every
// backend section, digests, sorting and validation.
func BenchmarkNewPlan5000(b *testing.B) {
	pieces, profiles, backends, maps := bigInputs(benchBackends)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := renderplan.NewPlan(pieces, profiles, backends, maps, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkNewPlan5000Sorted is BenchmarkNewPlan5000 with the backends
// (and their pieces) in name order, as templates usually emit them: no
// sorting needed.
func BenchmarkNewPlan5000Sorted(b *testing.B) {
	pieces, profiles, backends, maps := bigInputs(benchBackends)
	slices.SortFunc(backends, func(x, y renderplan.Backend) int { return strings.Compare(x.Name, y.Name) })
	for i, be := range backends {
		pieces[2+i] = renderplan.Piece{Kind: renderplan.SectionBackend, Name: be.Name}
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := renderplan.NewPlan(pieces, profiles, backends, maps, nil); err != nil {
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
// they come in a fixed shuffled order and NewPlan sorts them.
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

// BenchmarkNewPlan5000ThreeMaps measures NewPlan with three 5,000-entry
// maps whose entries need sorting.
func BenchmarkNewPlan5000ThreeMaps(b *testing.B) {
	pieces, profiles, backends, maps := threeMapInputs(benchBackends, false)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := renderplan.NewPlan(pieces, profiles, backends, maps, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkNewPlan5000ThreeMapsSorted is BenchmarkNewPlan5000ThreeMaps
// with every map's entries already sorted by key: the case of a template
// assembler that keeps map entries in order across renders.
func BenchmarkNewPlan5000ThreeMapsSorted(b *testing.B) {
	pieces, profiles, backends, maps := threeMapInputs(benchBackends, true)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := renderplan.NewPlan(pieces, profiles, backends, maps, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPlanID5000ThreeMaps measures Plan.ID of the plan with three
// 5,000-entry maps.
func BenchmarkPlanID5000ThreeMaps(b *testing.B) {
	pieces, profiles, backends, maps := threeMapInputs(benchBackends, true)
	out, err := renderplan.NewPlan(pieces, profiles, backends, maps, nil)
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

// BenchmarkNewPlan5000Appended measures NewPlan when 150 routes were
// added to 5,000: backends and map entries sorted but for 150 at the end.
func BenchmarkNewPlan5000Appended(b *testing.B) {
	pieces, profiles, backends, maps := appendedInputs(benchBackends, 150)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := renderplan.NewPlan(pieces, profiles, backends, maps, nil); err != nil {
			b.Fatal(err)
		}
	}
}
