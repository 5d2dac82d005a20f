package renderplan_test

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/haptic-io/haptic/renderplan"
)

// Validate finds each section's backend whether the sections come in name
// order, in another order (it then stops searching and indexes the
// backends), or with a few out of place.
func TestValidateFindsBackendSectionsInAnyOrder(t *testing.T) {
	for _, n := range []int{3, 20, 300} {
		out := bigOutput(t, n)
		if err := out.Plan.Validate(); err != nil {
			t.Fatalf("%d backends: Validate() = %v", n, err)
		}
		p := out.Plan.Clone()
		var first, second int // the first two backend sections
		for i := len(p.Sections) - 1; i >= 0; i-- {
			if p.Sections[i].Kind == renderplan.SectionBackend {
				first, second = i, first
			}
		}
		moved := p.Sections[second].Name
		p.Sections[second].Name = p.Sections[first].Name
		err := p.Validate()
		if err == nil {
			t.Fatalf("%d backends: Validate() = nil with two sections of backend %s", n, p.Sections[first].Name)
		}
		for _, want := range []string{
			"backend " + p.Sections[first].Name + ": more than one section",
			"backend " + moved + ": no section",
		} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%d backends: Validate() = %v\nwant a problem %q", n, err, want)
			}
		}
	}
}

// NewOutput finds each backend piece's backend whether the pieces come in
// the order of the backends argument, in name order, in another order (it
// then stops searching and indexes the backends), or with one out of
// place; and it still reports a piece of an unknown backend.
func TestNewOutputFindsBackendPiecesInAnyOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	for _, n := range []int{3, 20, 300} {
		pieces, profiles, backends, maps := bigInputs(n)
		bePieces := pieces[2 : 2+n] // bigInputs: core, profile, backends…, core
		byName := slices.Clone(bePieces)
		slices.SortFunc(byName, func(a, b renderplan.Piece) int { return strings.Compare(a.Name, b.Name) })
		shuffled := slices.Clone(bePieces)
		r.Shuffle(n, func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		onceMoved := slices.Clone(bePieces)
		onceMoved[0], onceMoved[n-1] = onceMoved[n-1], onceMoved[0]
		for name, order := range map[string][]renderplan.Piece{
			"input order": bePieces, "name order": byName, "shuffled": shuffled, "one moved": onceMoved,
		} {
			ps := slices.Concat(pieces[:2], order, pieces[2+n:])
			out, err := renderplan.NewOutput(ps, profiles, backends, maps, nil)
			if err != nil {
				t.Fatalf("%d backends, %s: %v", n, name, err)
			}
			cfg := configBody(t, out)
			for _, s := range out.Plan.Sections {
				if s.Kind != renderplan.SectionBackend {
					continue
				}
				be, _ := out.Plan.Backend(s.Name)
				if got := cfg[s.Offset : s.Offset+s.Length]; got != renderplan.BackendText(*be) {
					t.Fatalf("%d backends, %s: section of %s is %q, want its BackendText", n, name, s.Name, got)
				}
			}
			ps[len(ps)/2] = renderplan.Piece{Kind: renderplan.SectionBackend, Name: "be_unknown"}
			if _, err := renderplan.NewOutput(ps, profiles, backends, maps, nil); err == nil ||
				!strings.Contains(err.Error(), "backend be_unknown: piece without a backend") {
				t.Errorf("%d backends, %s: NewOutput error = %v, want one for the piece of be_unknown", n, name, err)
			}
		}
	}
}
