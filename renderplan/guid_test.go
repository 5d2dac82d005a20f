package renderplan_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/go-multierror"

	"github.com/haptic-io/haptic/renderplan"
)

// Guids are checked for uniqueness after the walk over the backends, yet
// each reuse must be reported where the walk met it, naming the first
// user, between the problems found before and after it.
func TestValidateReportsAReusedGUIDWhereItIsUsed(t *testing.T) {
	b := renderplan.NewBuilder()
	b.Text("global\n")
	must(t, b.Profile("web", []string{"mode http"}))
	for i, name := range []string{"be_a", "be_b", "be_c", "be_d"} {
		must(t, b.Backend(renderplan.Backend{Name: name, GUID: "g-" + name, Profile: "web", Servers: []renderplan.Server{
			{Name: "s1", Address: "10.0.0.1", Port: 80, Weight: 1, Keywords: []string{"guid", "g-s" + string(rune('0'+i))}},
		}}))
	}
	out, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	p := out.Plan.Clone()
	p.Backends[0].Servers[0].Weight = -1                           // a problem before any reuse
	p.Backends[1].Servers[0].Port = 0                              // a problem right before a first use
	p.Backends[1].Servers[0].Keywords = []string{"guid", "g-be_d"} // be_b's server takes be_d's guid first
	p.Backends[2].GUID = "g-be_a"                                  // be_c reuses be_a's guid
	p.Backends[2].Mode = "tcp"                                     // a problem after that reuse
	p.Backends[3].Servers[0].Keywords = []string{"guid", "g-be_a"} // a third use of be_a's guid

	var merr *multierror.Error
	if !errors.As(p.Validate(), &merr) {
		t.Fatalf("Validate() = %v, want a *multierror.Error", p.Validate())
	}
	var got []string
	for _, err := range merr.Errors {
		got = append(got, err.Error())
	}
	want := []string{
		"backend be_a: server s1: weight -1 out of range 0-256",
		"backend be_b: server s1: port 0 out of range 1-65535",
		"backend be_c: guid g-be_a already used by backend be_a",
		`backend be_c: mode "tcp" differs from profile web mode "http"`,
		"backend be_d: guid g-be_d already used by backend be_b: server s1",
		"backend be_d: server s1: guid g-be_a already used by backend be_a",
		"backend be_a: section is not BackendText of the backend",
		"backend be_b: section is not BackendText of the backend",
		"backend be_c: section is not BackendText of the backend",
		"backend be_d: section is not BackendText of the backend",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
}
