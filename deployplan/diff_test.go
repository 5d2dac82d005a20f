package deployplan_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/haptic-io/haptic/agentapi/runtimeop"
	"github.com/haptic-io/haptic/deployplan"
	"github.com/haptic-io/haptic/renderplan"
)

const tinyPlan = `
text global
text frontend fe
text use_backend %[req.hdr(host),lower,map(maps/hosts.map)]
profile web mode http | balance roundrobin
backend be_api web
  server pod-a 10.0.0.1:8080
map maps/hosts.map
  api.example.com be_api
`

func baseline(p *renderplan.Plan, version string) deployplan.Baseline {
	return deployplan.Baseline{Plan: p, HAProxyVersion: version, AgentOps: runtimeop.OpKinds()}
}

func TestDiffUnknownStateAlwaysReloadsWithTheFullFileSet(t *testing.T) {
	p := parsePlan(t, tinyPlan).Plan
	foreign := p.Clone()
	foreign.Schema = "haptic.renderplan/v0"
	unsorted := p.Clone()
	unsorted.Backends = append(unsorted.Backends, unsorted.Backends[0])
	tests := []struct {
		name    string
		next    *renderplan.Plan
		base    deployplan.Baseline
		subject string
	}{
		{"no baseline plan", p, baseline(nil, "3.4"), "baseline"},
		{"foreign schema in next", foreign, baseline(p, "3.4"), "plan"},
		{"foreign schema in baseline", p, baseline(foreign, "3.4"), "baseline"},
		{"agent op kinds unknown", p, deployplan.Baseline{Plan: p, HAProxyVersion: "3.4"}, "agent"},
		{"unparseable haproxy version", p, baseline(p, "latest"), "haproxy"},
		{"haproxy 2.8", p, baseline(p, "2.8.5"), "haproxy"},
		{"duplicate backend in next", unsorted, baseline(p, "3.4"), "plan"},
		{"duplicate backend in baseline", p, baseline(unsorted, "3.4"), "baseline"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := deployplan.Diff(tt.next, tt.base)
			if d.Verdict != deployplan.VerdictReload || len(d.Ops) != 0 {
				t.Fatalf("got %s with %d ops, want reload without ops", d.Verdict, len(d.Ops))
			}
			if len(d.Reasons) != 1 || d.Reasons[0].Subject != tt.subject || !strings.Contains(d.Reasons[0].Message, "full state") {
				t.Errorf("reasons = %v, want one full-state reason about %s", d.Reasons, tt.subject)
			}
			if diff := cmp.Diff(tt.next.Files, d.Files); diff != "" {
				t.Errorf("files (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDiffNilNextPlanIsAReloadWithoutFiles(t *testing.T) {
	d := deployplan.Diff(nil, baseline(nil, "3.4"))
	if d.Verdict != deployplan.VerdictReload || d.Files != nil {
		t.Fatalf("got %+v", d)
	}
}

func TestDiffDecisionSharesNoMemoryWithThePlans(t *testing.T) {
	base := parsePlan(t, tinyPlan).Plan
	next := parsePlan(t, tinyPlan+"backend be_b web\n  server s 10.0.0.2:80 maxconn 5\n").Plan
	d := deployplan.Diff(next, baseline(base, "3.4"))
	if d.Verdict != deployplan.VerdictRuntime {
		t.Fatalf("verdict %s, want runtime:\n%s", d.Verdict, d)
	}
	for i := range d.Ops {
		for k := range d.Ops[i].Keywords {
			d.Ops[i].Keywords[k] = "mutated"
		}
	}
	d.Files[0].Path = "mutated"
	if next.Backends[1].Servers[0].Keywords[0] != "maxconn" || next.Files[0].Path == "mutated" {
		t.Fatal("mutating the decision changed the plan")
	}
}

func TestDiffReloadsWhenRuntimeWorkCostsMoreThanAReload(t *testing.T) {
	// 2,000 new dynamic backends with 4 servers each: ~26,000 ops, which
	// exceed the default bound and cost more than reloading ~2,000
	// backends.
	var b strings.Builder
	b.WriteString(tinyPlan)
	for i := range 2000 {
		b.WriteString("backend be_n" + itoa(i) + " web\n")
		for s := range 4 {
			b.WriteString("  server s" + itoa(s) + " 10.1." + itoa(i%250) + "." + itoa(s+1) + ":80 check\n")
		}
	}
	base := parsePlan(t, tinyPlan).Plan
	next := parsePlan(t, b.String()).Plan
	d := deployplan.Diff(next, baseline(base, "3.4"))
	if d.Verdict != deployplan.VerdictReload || len(d.Reasons) != 1 || d.Reasons[0].Subject != "plan" {
		t.Fatalf("got %s %v, want a reload because of the op count", d.Verdict, d.Reasons)
	}
	// A generous explicit bound leaves the decision to the cost model.
	base2 := baseline(base, "3.4")
	base2.MaxOps = 1_000_000
	d = deployplan.Diff(next, base2)
	if d.Verdict != deployplan.VerdictReload || !strings.Contains(d.Reasons[0].Message, "cost more than a reload") {
		t.Fatalf("got %s %v, want a reload by cost", d.Verdict, d.Reasons)
	}
}

func TestDiffKeepsEachServersOpsTogetherInEmittedOrder(t *testing.T) {
	base := parsePlan(t, tinyPlan+"backend be_b web\n  server s1 10.0.0.5:80\n  server s2 10.0.0.6:80\n").Plan
	next := parsePlan(t, tinyPlan+"backend be_b web\n  server s1 10.0.0.7:81 weight=9\n  server s2 10.0.0.8:80 disabled\n").Plan
	d := deployplan.Diff(next, baseline(base, "3.0"))
	var got []string
	for _, o := range d.Ops {
		got = append(got, o.String())
	}
	want := []string{
		"server.set_state be_b/s1 state=maint",
		"server.set_addr be_b/s1 addr=10.0.0.7 port=81",
		"server.set_weight be_b/s1 weight=9",
		"server.set_state be_b/s1 state=ready",
		"server.set_state be_b/s2 state=maint",
		"server.set_addr be_b/s2 addr=10.0.0.8 port=80",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ops (-want +got):\n%s", diff)
	}
}

func TestDiffHostnameServerChangeReloads(t *testing.T) {
	// renderplan refuses host names, but Diff must not trust that: a plan
	// decoded from elsewhere may carry one.
	base := parsePlan(t, tinyPlan).Plan
	next := base.Clone()
	next.Backends[0].Servers[0].Address = "api.internal"
	d := deployplan.Diff(next, baseline(base, "3.4"))
	if d.Verdict != deployplan.VerdictReload || !strings.Contains(d.Reasons[0].Message, "not an IP") {
		t.Fatalf("got %s %v", d.Verdict, d.Reasons)
	}
}

func TestDiffConfigChangeOutsideSectionsReloads(t *testing.T) {
	base := parsePlan(t, tinyPlan).Plan
	next := base.Clone()
	next.Files[0].Digest = "0000000000000000" // haproxy.cfg
	d := deployplan.Diff(next, baseline(base, "3.4"))
	if d.Verdict != deployplan.VerdictReload || !strings.Contains(d.Reasons[0].Message, "outside its recorded sections") {
		t.Fatalf("got %s %v", d.Verdict, d.Reasons)
	}
}

func itoa(i int) string {
	const digits = "0123456789"
	if i < 10 {
		return digits[i : i+1]
	}
	return itoa(i/10) + digits[i%10:i%10+1]
}
