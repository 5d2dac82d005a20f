package renderplan_test

import (
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
