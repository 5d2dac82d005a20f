package renderplan_test

import (
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
