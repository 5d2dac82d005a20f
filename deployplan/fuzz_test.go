package deployplan_test

import (
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/haptic-io/haptic/agentapi/runtimeop"
	"github.com/haptic-io/haptic/deployplan"
	"github.com/haptic-io/haptic/renderplan"
)

// FuzzDiff runs Diff on random plan pairs, then on copies damaged by the
// fuzzer's bytes (unsorted or duplicate names, empty fields, odd versions).
// Diff must never panic, must be deterministic, and any runtime decision
// must hold only valid ops in phase order.
func FuzzDiff(f *testing.F) {
	f.Add(uint64(1), "3.4", []byte{})
	f.Add(uint64(2), "3.0.11-1", []byte{0, 1, 2, 3})
	f.Add(uint64(3), "3.2", []byte{9, 9, 9})
	f.Fuzz(func(t *testing.T, seed uint64, version string, damage []byte) {
		if len(damage) > 64 {
			damage = damage[:64]
		}
		r := rand.New(rand.NewPCG(seed, seed>>1))
		bs := randSpec(r)
		bo, err := bs.build()
		if err != nil {
			t.Skip("generator produced an invalid base:", err)
		}
		no, err := bs.mutate(r).build()
		if err != nil {
			t.Skip("generator produced an invalid next:", err)
		}
		base, next := bo.Plan.Clone(), no.Plan.Clone()
		for i, b := range damage {
			target := next
			if i%2 == 1 {
				target = base
			}
			damagePlan(target, b)
		}
		bl := deployplan.Baseline{Plan: base, HAProxyVersion: version, AgentOps: runtimeop.OpKinds()}
		d1 := deployplan.Diff(next, bl)
		d2 := deployplan.Diff(next, bl)
		if diff := cmp.Diff(d1, d2); diff != "" {
			t.Fatalf("Diff is not deterministic (-first +second):\n%s", diff)
		}
		if d1.Verdict != deployplan.VerdictRuntime {
			if len(d1.Ops) > 0 {
				t.Fatalf("%s decision with ops", d1.Verdict)
			}
			return
		}
		for i, o := range d1.Ops {
			if err := o.Validate(); err != nil {
				t.Fatalf("op %d %v: %v", i, o, err)
			}
			if i > 0 && d1.Ops[i-1].Kind.Phase() > o.Kind.Phase() {
				t.Fatalf("op %d %v runs in an earlier phase than op %d %v", i, o, i-1, d1.Ops[i-1])
			}
		}
	})
}

// damagePlan applies one damage selected by b.
func damagePlan(p *renderplan.Plan, b byte) {
	n := int(b >> 4)
	switch b % 12 {
	case 0:
		if len(p.Backends) > 1 {
			p.Backends[0], p.Backends[1] = p.Backends[1], p.Backends[0]
		}
	case 1:
		if len(p.Backends) > 0 {
			p.Backends = append(p.Backends, p.Backends[n%len(p.Backends)])
		}
	case 2:
		if len(p.Backends) > 0 {
			be := &p.Backends[n%len(p.Backends)]
			if len(be.Servers) > 0 {
				be.Servers[0].Name = ""
				be.Servers[0].Address = "not an ip"
			}
		}
	case 3:
		p.Schema = ""
	case 4:
		if len(p.Maps) > 0 {
			m := &p.Maps[n%len(p.Maps)]
			if len(m.Entries) > 0 { // duplicate one key
				m.Entries = append(m.Entries, m.Entries[n%len(m.Entries)])
			}
		}
	case 5:
		p.Sections = nil
	case 6:
		if len(p.Files) > 0 {
			p.Files[n%len(p.Files)].Digest = ""
		}
	case 7:
		if len(p.Backends) > 0 {
			p.Backends[n%len(p.Backends)].Shape = ""
		}
	case 8:
		if len(p.Maps) > 0 {
			p.Maps[n%len(p.Maps)].Ordered = !p.Maps[n%len(p.Maps)].Ordered
		}
	case 9:
		if len(p.Backends) > 0 {
			be := &p.Backends[n%len(p.Backends)]
			if len(be.Servers) > 0 {
				be.Servers[0].Port = -n
				be.Servers[0].Weight = 1000
			}
		}
	case 10:
		if len(p.Files) > 1 {
			p.Files[0], p.Files[1] = p.Files[1], p.Files[0]
		}
	case 11:
		if len(p.Maps) > 0 && len(p.Maps[0].Entries) > 0 {
			p.Maps[0].Entries[0].Value = "a\nshow info"
		}
	}
}
