package deployplan_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/haptic-io/haptic/agentapi/runtimeop"
	"github.com/haptic-io/haptic/deployplan"
	"github.com/haptic-io/haptic/renderplan"
)

// TestDiffDecidesExactlyLikeTheReferenceImplementation is the differential
// test of the in-step Diff: over many random plan pairs (small ones from
// the spec generator, larger ones edited in place, plans sharing memory as
// renderplan.Cache outputs do, damaged and unsorted ones) and baselines, Diff
// must return exactly what the reference implementation (Diff before the
// rewrite, kept in reference_test.go) returns.
func TestDiffDecidesExactlyLikeTheReferenceImplementation(t *testing.T) {
	iterations := 4000
	if testing.Short() {
		iterations = 400
	}
	r := rand.New(rand.NewPCG(7, 11))
	verdicts := map[deployplan.Verdict]int{}
	for i := range iterations {
		base, next := randomPair(t, r)
		bl := deployplan.Baseline{Plan: base, HAProxyVersion: pick(r, []string{"3.0", "3.2.26", "3.4.7-1", "3.4"}), AgentOps: runtimeop.OpKinds()}
		switch r.IntN(10) {
		case 0:
			bl.AgentOps = bl.AgentOps[:len(bl.AgentOps)-3]
		case 1:
			bl.MaxOps = 1 + r.IntN(6)
		case 2:
			if len(base.Backends) > 0 {
				be := pick(r, base.Backends)
				bl.PendingDeletes = []runtimeop.PendingDelete{{Backend: be.Name + pick(r, []string{"", "x"})}}
				if len(be.Servers) > 0 {
					bl.PendingDeletes = append(bl.PendingDeletes, runtimeop.PendingDelete{Backend: be.Name, Server: pick(r, be.Servers).Name})
				}
			}
		case 3:
			bl.AgentOps = append(bl.AgentOps, runtimeop.OpKind(99), runtimeop.OpKind(-1))
		}
		want := deployplan.ReferenceDiff(next, bl)
		got := deployplan.Diff(next, bl)
		verdicts[got.Verdict]++
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("pair %d: Diff differs from the reference (-reference +Diff):\n%s", i, diff)
		}
	}
	t.Logf("verdicts over %d pairs: %v", iterations, verdicts)
	for _, v := range []deployplan.Verdict{deployplan.VerdictNoop, deployplan.VerdictFileOnly, deployplan.VerdictRuntime, deployplan.VerdictReload} {
		if verdicts[v] < iterations/100 {
			t.Errorf("only %d of %d pairs gave %s; the generator is too narrow", verdicts[v], iterations, v)
		}
	}
}

// randomPair returns a base and a next plan; they may share memory, be
// equal, or be damaged.
func randomPair(t *testing.T, r *rand.Rand) (base, next *renderplan.Plan) {
	t.Helper()
	switch r.IntN(3) {
	case 0: // small spec pairs, built separately
		bs := randSpec(r)
		bo, err := bs.build()
		if err != nil {
			t.Fatal(err)
		}
		no, err := bs.mutate(r).build()
		if err != nil {
			t.Fatal(err)
		}
		base, next = bo.Plan, no.Plan
	default: // a larger plan and an edited copy sharing its unchanged parts
		base = largePlan(t, r, 5+r.IntN(60))
		if r.IntN(8) == 0 { // out of order in both plans alike
			disorder(r, base)
		}
		next = shallowCopy(base)
		if r.IntN(2) == 0 {
			next = base.Clone()
		}
		for range r.IntN(5) {
			editPlan(r, next)
		}
		if r.IntN(8) == 0 { // a general file only
			next.Files = slices.Clone(next.Files)
			if f, ok := next.File("general/notes.txt"); ok {
				f.Digest += "1"
			}
		}
	}
	if r.IntN(40) == 0 { // the pod runs this very plan
		next = base
	}
	if r.IntN(3) > 0 {
		return base, next
	}
	for range 1 + r.IntN(2) {
		if r.IntN(4) == 0 {
			damagePlan(base, byte(r.IntN(256)))
		} else {
			damagePlan(next, byte(r.IntN(256)))
		}
	}
	return base, next
}

// largePlan builds a plan of n backends (a few structural) routed by two
// unordered maps and an ordered one.
func largePlan(t *testing.T, r *rand.Rand, n int) *renderplan.Plan {
	t.Helper()
	b := renderplan.NewBuilder()
	b.Text("global\n\nfrontend fe\n    bind :8080\n\n")
	if err := b.Profile("web", []string{"mode http", "balance roundrobin"}); err != nil {
		t.Fatal(err)
	}
	if err := b.Profile("tcp", []string{"mode tcp"}); err != nil {
		t.Fatal(err)
	}
	hosts := renderplan.Map{Path: "maps/hosts.map"}
	sni := renderplan.Map{Path: "maps/sni.map"}
	paths := renderplan.Map{Path: "maps/paths.map", Ordered: true}
	for i := range n {
		name := fmt.Sprintf("be_%03d", i*2)
		be := renderplan.Backend{Name: name, GUID: "g-" + name, Profile: pick(r, []string{"web", "web", "tcp"})}
		if r.IntN(8) == 0 {
			be.Body = []string{"balance " + pick(r, []string{"static-rr", "source", "roundrobin"})}
		}
		for k := range r.IntN(4) {
			be.Servers = append(be.Servers, renderplan.Server{Name: fmt.Sprintf("pod-%d", k), Address: fmt.Sprintf("10.0.%d.%d", i, k+1), Port: 8080, Weight: 1, Check: r.IntN(4) == 0})
		}
		if err := b.Backend(be); err != nil {
			t.Fatal(err)
		}
		hosts.Entries = append(hosts.Entries, renderplan.MapEntry{Key: fmt.Sprintf("h%03d.test", i*2), Value: name})
		sni.Entries = append(sni.Entries, renderplan.MapEntry{Key: fmt.Sprintf("s%03d.test", i*2), Value: name})
		if i%5 == 0 {
			paths.Entries = append(paths.Entries, renderplan.MapEntry{Key: fmt.Sprintf("/p%d", i), Value: name})
		}
	}
	for _, m := range []renderplan.Map{hosts, sni, paths} {
		if err := b.Map(m); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.File("certs/a.pem", renderplan.FileCert, []byte("PEM a\n"), false); err != nil {
		t.Fatal(err)
	}
	if err := b.File("general/notes.txt", renderplan.FileGeneral, []byte("v1\n"), false); err != nil {
		t.Fatal(err)
	}
	out, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return out.Plan
}

// shallowCopy copies the plan's lists but shares every backend's servers
// and every map's entries, as outputs of one renderplan.Cache do.
func shallowCopy(p *renderplan.Plan) *renderplan.Plan {
	c := *p
	c.Sections = slices.Clone(p.Sections)
	c.Profiles = slices.Clone(p.Profiles)
	c.Backends = slices.Clone(p.Backends)
	c.Maps = slices.Clone(p.Maps)
	c.Files = slices.Clone(p.Files)
	return &c
}

// editPlan changes p in place the way a render would (and a few ways it
// would not), copying any servers or entries it changes first.
func editPlan(r *rand.Rand, p *renderplan.Plan) {
	switch x := r.IntN(14); {
	case x < 2 && len(p.Backends) > 0: // change a server
		be := &p.Backends[r.IntN(len(p.Backends))]
		be.Servers = slices.Clone(be.Servers)
		if len(be.Servers) > 0 {
			s := &be.Servers[r.IntN(len(be.Servers))]
			switch r.IntN(5) {
			case 0:
				s.Address = pick(r, []string{"10.9.9.9", "2001:db8::9", "name.test"})
			case 1:
				s.Weight = r.IntN(3)
			case 2:
				s.Disabled = !s.Disabled
			case 3:
				s.Check = !s.Check
			case 4:
				s.Keywords = []string{pick(r, []string{"maxconn", "resolvers", "track", "init-state"}), "1"}
			}
		}
	case x < 4 && len(p.Backends) > 0: // add or remove a server
		be := &p.Backends[r.IntN(len(p.Backends))]
		if len(be.Servers) > 0 && r.IntN(2) == 0 {
			be.Servers = slices.Delete(slices.Clone(be.Servers), 0, 1)
		} else {
			be.Servers = append(slices.Clone(be.Servers), renderplan.Server{Name: "pod-z", Address: "10.8.8.8", Port: 80, Weight: 1, Check: r.IntN(2) == 0})
		}
	case x < 6: // add a backend and route to it
		name := fmt.Sprintf("be_%03d", 2*r.IntN(80)+1)
		guid := "g-" + name
		if r.IntN(6) == 0 && len(p.Backends) > 0 {
			guid = pick(r, p.Backends).GUID // taken
		}
		be := renderplan.Backend{Name: name, GUID: guid, Profile: "web", Mode: "http", Shape: renderplan.ShapeDynamic,
			Servers: []renderplan.Server{{Name: "pod-a", Address: "10.7.7.7", Port: 80, Weight: 1}}}
		if r.IntN(8) == 0 {
			be.Shape, be.Body = renderplan.ShapeStructural, []string{"balance source"}
		}
		k, found := slices.BinarySearchFunc(p.Backends, name, func(b renderplan.Backend, n string) int { return cmpString(b.Name, n) })
		if !found {
			p.Backends = slices.Insert(slices.Clone(p.Backends), k, be)
		}
		editEntries(r, p, "h"+name[3:]+".test", name)
	case x < 7 && len(p.Backends) > 0: // remove a backend
		k := r.IntN(len(p.Backends))
		p.Backends = slices.Delete(slices.Clone(p.Backends), k, k+1+r.IntN(len(p.Backends)-k))
	case x < 8 && len(p.Backends) > 0: // change a backend's header
		be := &p.Backends[r.IntN(len(p.Backends))]
		switch r.IntN(4) {
		case 0:
			be.GUID += "x"
		case 1:
			be.Profile = "tcp"
		case 2:
			be.Body = append(slices.Clone(be.Body), "timeout server 5s")
		case 3:
			be.Mode = "tcp"
		}
	case x < 11: // map entries
		editEntries(r, p, fmt.Sprintf("h%03d.test", r.IntN(160)), pick(r, []string{"be_000", "be_002", "be_x"}))
	case x < 12 && len(p.Maps) > 0:
		m := &p.Maps[r.IntN(len(p.Maps))]
		if r.IntN(2) == 0 {
			m.Ordered = !m.Ordered
		} else if len(m.Entries) > 1 { // out of order or duplicated
			m.Entries = slices.Clone(m.Entries)
			k := r.IntN(len(m.Entries) - 1)
			if r.IntN(2) == 0 {
				m.Entries[k], m.Entries[k+1] = m.Entries[k+1], m.Entries[k]
			} else {
				m.Entries[k+1].Key = m.Entries[k].Key
			}
		}
	case x < 13 && len(p.Files) > 0: // a file's digest or flag, or a new file
		f := &p.Files[r.IntN(len(p.Files))]
		switch r.IntN(4) {
		case 0:
			f.Digest += "0"
		case 1:
			f.ReloadOnChange = !f.ReloadOnChange
		default:
			p.Files = append(slices.Clone(p.Files), renderplan.File{Path: "zz/extra.txt", Kind: renderplan.FileGeneral, Digest: "d", Size: 1})
			if f, ok := p.File("general/notes.txt"); ok {
				f.Digest += "1"
			}
		}
	case len(p.Sections) > 0: // a section or profile's text
		if r.IntN(2) == 0 {
			p.Sections[r.IntN(len(p.Sections))].Digest += "0"
		} else if len(p.Profiles) > 0 {
			p.Profiles[r.IntN(len(p.Profiles))].Digest += "0"
		}
	}
}

// disorder swaps or duplicates two neighbours in the middle of p's
// backends, of one backend's servers or of one map's entries.
func disorder(r *rand.Rand, p *renderplan.Plan) {
	swapOrDup := func(n int, swap func(i, j int), dup func(i, j int)) {
		if n < 3 {
			return
		}
		k := 1 + r.IntN(n-2)
		if r.IntN(2) == 0 {
			swap(k, k+1)
		} else {
			dup(k, k+1)
		}
	}
	switch r.IntN(3) {
	case 0:
		bs := p.Backends
		swapOrDup(len(bs), func(i, j int) { bs[i], bs[j] = bs[j], bs[i] }, func(i, j int) { bs[j].Name = bs[i].Name })
	case 1:
		if len(p.Backends) > 0 {
			s := p.Backends[r.IntN(len(p.Backends))].Servers
			swapOrDup(len(s), func(i, j int) { s[i], s[j] = s[j], s[i] }, func(i, j int) { s[j].Name = s[i].Name })
		}
	case 2:
		if len(p.Maps) > 0 {
			e := p.Maps[r.IntN(len(p.Maps))].Entries
			swapOrDup(len(e), func(i, j int) { e[i], e[j] = e[j], e[i] }, func(i, j int) { e[j].Key = e[i].Key })
		}
	}
}

// editEntries sets key to value in one of p's unordered maps (removing it
// when it is there, now and then), keeping the entries sorted.
func editEntries(r *rand.Rand, p *renderplan.Plan, key, value string) {
	if len(p.Maps) == 0 {
		return
	}
	m := &p.Maps[r.IntN(len(p.Maps))]
	e := slices.Clone(m.Entries)
	k, found := slices.BinarySearchFunc(e, key, func(x renderplan.MapEntry, k string) int { return cmpString(x.Key, k) })
	switch {
	case found && r.IntN(3) == 0:
		e = slices.Delete(e, k, k+1)
	case found:
		e[k].Value = value
	default:
		e = slices.Insert(e, k, renderplan.MapEntry{Key: key, Value: value})
	}
	m.Entries = e
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// FuzzDiffMatchesReference runs Diff and the reference implementation on
// random plan pairs (as the differential test makes them, from the
// fuzzer's seed) damaged further by the fuzzer's bytes, on the fuzzer's
// HAProxy version: the decisions must be identical.
func FuzzDiffMatchesReference(f *testing.F) {
	f.Add(uint64(1), "3.4", []byte{})
	f.Add(uint64(2), "3.0.11-1", []byte{0, 1, 2, 3})
	f.Add(uint64(3), "3.2", []byte{4, 8, 10, 11})
	f.Fuzz(func(t *testing.T, seed uint64, version string, damage []byte) {
		if len(damage) > 16 {
			damage = damage[:16]
		}
		r := rand.New(rand.NewPCG(seed, seed>>1))
		base, next := randomPair(t, r)
		for i, b := range damage {
			target := next
			if i%2 == 1 {
				target = base
			}
			damagePlan(target, b)
		}
		bl := deployplan.Baseline{Plan: base, HAProxyVersion: version, AgentOps: runtimeop.OpKinds()}
		if diff := cmp.Diff(deployplan.ReferenceDiff(next, bl), deployplan.Diff(next, bl)); diff != "" {
			t.Fatalf("Diff differs from the reference (-reference +Diff):\n%s", diff)
		}
	})
}
