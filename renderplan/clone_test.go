package renderplan_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/haptic-io/haptic/renderplan"
)

func TestCloneSharesNoMemoryWithTheOriginal(t *testing.T) {
	orig := fullOutput(t).Plan
	c := orig.Clone()
	if diff := cmp.Diff(orig, c); diff != "" {
		t.Fatalf("Clone differs (-want +got):\n%s", diff)
	}
	c.Sections[0].Length++
	c.Profiles[0].Mode = "x"
	c.Backends[0].Body = append(c.Backends[0].Body, "x")
	c.Backends[0].Servers[0].Weight++
	c.Backends[0].Servers[0].Keywords[0] = "x"
	c.Backends[1].Body[0] = "x"
	c.Maps[0].Entries[0].Value = "x"
	c.Files[0].Size++
	if diff := cmp.Diff(fullOutput(t).Plan, orig); diff != "" {
		t.Errorf("changing the clone changed the original (-want +got):\n%s", diff)
	}
	var nilPlan *renderplan.Plan
	if nilPlan.Clone() != nil {
		t.Error("Clone of nil plan is not nil")
	}
}

func TestEqualComparesNilPlans(t *testing.T) {
	var a, b *renderplan.Plan
	p := fullOutput(t).Plan
	if !a.Equal(b) {
		t.Error("nil.Equal(nil) = false")
	}
	if a.Equal(p) || p.Equal(a) {
		t.Error("a nil plan equals a non-nil one")
	}
	if !p.Equal(p.Clone()) {
		t.Error("plan not Equal to its clone")
	}
}

func TestLookupsFindByNameAndPath(t *testing.T) {
	p := bigOutput(t, 200).Plan
	for _, want := range p.Backends {
		be, ok := p.Backend(want.Name)
		if !ok || be.Name != want.Name {
			t.Fatalf("Backend(%s) = %v, %v", want.Name, be, ok)
		}
		for _, ws := range want.Servers {
			if s, ok := be.Server(ws.Name); !ok || s.Name != ws.Name {
				t.Fatalf("Server(%s) = %v, %v", ws.Name, s, ok)
			}
		}
	}
	if _, ok := p.Backend("be_zzz"); ok {
		t.Error("Backend found a missing name")
	}
	if _, ok := p.Backend(""); ok {
		t.Error("Backend found the empty name")
	}
	if m, ok := p.Map("maps/hosts.map"); !ok || len(m.Entries) != 200 {
		t.Errorf("Map(maps/hosts.map) = %v, %v", m, ok)
	}
	if _, ok := p.Map("maps/none.map"); ok {
		t.Error("Map found a missing path")
	}
	if f, ok := p.File(renderplan.ConfigPath); !ok || f.Kind != renderplan.FileConfig {
		t.Errorf("File(haproxy.cfg) = %v, %v", f, ok)
	}
	if pr, ok := p.Profile(p.Profiles[0].Name); !ok || pr.Mode != "http" {
		t.Errorf("Profile = %v, %v", pr, ok)
	}
	if _, ok := p.Profile("nope"); ok {
		t.Error("Profile found a missing name")
	}
}

func TestCoreDigestChangesOnlyWithCoreText(t *testing.T) {
	build := func(core string, weight int) *renderplan.Plan {
		pieces, profiles, backends, _ := bigInputs(3)
		pieces[0].Text = core
		backends[1].Servers[0].Weight = weight
		out, err := renderplan.NewOutput(pieces, profiles, backends, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		return out.Plan
	}
	base := build(fullCore, 1)
	if got := build(fullCore, 5).CoreDigest(); got != base.CoreDigest() {
		t.Error("a server change changed the core digest")
	}
	if got := build(fullCore+"# more\n", 1).CoreDigest(); got == base.CoreDigest() {
		t.Error("a core text change left the core digest unchanged")
	}
}
