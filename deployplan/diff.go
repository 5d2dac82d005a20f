package deployplan

import (
	"fmt"
	"slices"

	"github.com/haptic-io/haptic/agentapi/runtimeop"
	"github.com/haptic-io/haptic/renderplan"
)

// Diff decides how next reaches the pod described by base. It is pure and
// deterministic: the same arguments give the same Decision, byte for byte
// once encoded. It never modifies its arguments; the Decision shares no
// memory with them. See the package documentation for the rules.
func Diff(next *renderplan.Plan, base Baseline) Decision {
	if next == nil {
		return Decision{Verdict: VerdictReload, Reasons: []Reason{{Subject: "plan", Message: "no next plan", Verdict: VerdictReload}}}
	}
	files := slices.Clone(next.Files)
	reload := func(subject, format string, args ...any) Decision {
		return Decision{Verdict: VerdictReload, Files: files, Reasons: []Reason{{Subject: subject, Message: fmt.Sprintf(format, args...), Verdict: VerdictReload}}}
	}

	// Rule 1: what the pod runs is unknown → full state + reload.
	switch {
	case base.Plan == nil:
		return reload("baseline", "unknown (no applied plan): full state")
	case next.Schema != renderplan.Schema:
		return reload("plan", "schema %q is not %q: full state", next.Schema, renderplan.Schema)
	case base.Plan.Schema != renderplan.Schema:
		return reload("baseline", "schema %q is not %q: full state", base.Plan.Schema, renderplan.Schema)
	case len(base.AgentOps) == 0:
		return reload("agent", "supported op kinds unknown: full state")
	}
	caps, err := CapabilitiesFor(base.HAProxyVersion)
	if err != nil {
		return reload("haproxy", "%v: full state", err)
	}
	if next == base.Plan {
		// The pod runs this very plan: nothing can differ, whatever its
		// lists hold, once they are in order.
		if p := canonicalProblem(next); p != "" {
			return reload("plan", "%s: full state", p)
		}
		return Decision{Verdict: VerdictNoop, Files: files}
	}
	d := &differ{base: base.Plan, next: next, caps: caps}
	d.pending = pendingSet(base.PendingDeletes)
	d.diffCore()
	// The walks merge the sorted lists of both plans in step and check, on
	// the way, that every list is sorted and unique (canonicalProblem).
	// When one is not, canonicalProblem names the first problem as before.
	if !d.diffProfiles() || !d.diffBackends() || !d.diffMaps() || !d.diffFiles() {
		if p := canonicalProblem(next); p != "" {
			return reload("plan", "%s: full state", p)
		}
		if p := canonicalProblem(base.Plan); p != "" {
			return reload("baseline", "%s: full state", p)
		}
		// Unreachable: a walk reports a list out of order only when one is.
		return reload("plan", "lists out of order: full state")
	}

	if len(d.reloads) > 0 {
		return Decision{Verdict: VerdictReload, Files: files, Reasons: d.reloads}
	}
	sortOps(d.ops)

	// Rule 2, continued: ops the pod cannot execute, or too many of them.
	supported := opKindSet(base.AgentOps)
	for _, o := range d.ops {
		if !supported.has(o.Kind) {
			return reload("agent", "does not support op kind %s", o.Kind)
		}
		if err := o.Validate(); err != nil {
			return reload(subjectOf(o), "cannot be changed at runtime: %v", err)
		}
	}
	maxOps := base.MaxOps
	if maxOps <= 0 {
		maxOps = DefaultMaxOps
	}
	if len(d.ops) > maxOps {
		return reload("plan", "%d runtime ops exceed the limit of %d per apply", len(d.ops), maxOps)
	}
	if rt, rl := runtimeCost(d.ops), reloadCost(next); rt > rl {
		return reload("plan", "%d runtime ops (~%v) cost more than a reload (~%v)", len(d.ops), rt.Round(100_000), rl.Round(100_000))
	}

	switch {
	case len(d.ops) > 0:
		return Decision{Verdict: VerdictRuntime, Ops: d.ops, Files: files, Reasons: d.reasons}
	case len(d.reasons) > 0:
		return Decision{Verdict: VerdictFileOnly, Files: files, Reasons: d.reasons}
	default:
		return Decision{Verdict: VerdictNoop, Files: files}
	}
}

// differ accumulates the result of one Diff.
type differ struct {
	base, next *renderplan.Plan
	caps       Capabilities
	pending    map[runtimeop.PendingDelete]bool

	ops     []runtimeop.Op
	reasons []Reason // runtime and file_only changes
	reloads []Reason // what forces a reload

	// sectionsChanged records that some section of haproxy.cfg changed,
	// which explains a change of haproxy.cfg's digest.
	sectionsChanged bool
	// guidLookups counts baseGUIDOwner calls; baseGUIDs maps the base
	// plan's backend guids to their backends, built once lookups are many.
	guidLookups int
	baseGUIDs   map[string]string
}

func (d *differ) mustReload(subject, format string, args ...any) {
	d.reloads = append(d.reloads, Reason{Subject: subject, Message: fmt.Sprintf(format, args...), Verdict: VerdictReload})
}

func (d *differ) runtime(subject, format string, args ...any) {
	d.reasons = append(d.reasons, Reason{Subject: subject, Message: fmt.Sprintf(format, args...), Verdict: VerdictRuntime})
}

func (d *differ) fileOnly(subject, format string, args ...any) {
	d.reasons = append(d.reasons, Reason{Subject: subject, Message: fmt.Sprintf(format, args...), Verdict: VerdictFileOnly})
}

func (d *differ) emit(ops ...runtimeop.Op) { d.ops = append(d.ops, ops...) }

// diffCore compares the core sections of haproxy.cfg in file order.
func (d *differ) diffCore() {
	a, b := d.base.Sections, d.next.Sections
	i, j := nextCore(a, 0), nextCore(b, 0)
	same := true
	for i < len(a) && j < len(b) {
		if a[i].Digest != b[j].Digest {
			same = false
			break
		}
		i, j = nextCore(a, i+1), nextCore(b, j+1)
	}
	if same && i == len(a) && j == len(b) {
		return
	}
	d.sectionsChanged = true
	na, nb := countCore(a), countCore(b)
	if na != nb {
		d.mustReload("core", "haproxy.cfg has %d core sections, had %d", nb, na)
		return
	}
	k := 0
	for i, j = nextCore(a, 0), nextCore(b, 0); i < len(a); i, j = nextCore(a, i+1), nextCore(b, j+1) {
		k++
		if a[i].Digest != b[j].Digest {
			d.mustReload("core", "section %d of %d (global, defaults, frontends) changed", k, na)
		}
	}
}

// nextCore returns the index of the first core section of s at or after
// i, or len(s).
func nextCore(s []renderplan.Section, i int) int {
	for i < len(s) && s[i].Kind != renderplan.SectionCore {
		i++
	}
	return i
}

func countCore(s []renderplan.Section) int {
	n := 0
	for i := range s {
		if s[i].Kind == renderplan.SectionCore {
			n++
		}
	}
	return n
}

// diffProfiles merges the two sorted profile lists; it reports false,
// having done nothing, when one is not sorted and unique.
func (d *differ) diffProfiles() bool {
	a, b := d.base.Profiles, d.next.Profiles
	if !sortedUnique(a, profileName) || !sortedUnique(b, profileName) {
		return false
	}
	before := len(d.reloads)
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case j == len(b) || i < len(a) && a[i].Name < b[j].Name:
			d.mustReload("profile "+a[i].Name, "removed")
			i++
		case i == len(a) || b[j].Name < a[i].Name:
			d.mustReload("profile "+b[j].Name, "added (defaults sections exist only from the configuration)")
			j++
		default:
			if a[i] != b[j] {
				d.mustReload("profile "+a[i].Name, "text changed")
			}
			i++
			j++
		}
	}
	if len(d.reloads) > before {
		d.sectionsChanged = true
	}
	return true
}

// canonicalProblem checks what Diff relies on: names and paths sorted and
// unique, and names the first list that is not. Diff's walks check the
// same on the way; it runs only when one of them found a problem, to
// name it.
func canonicalProblem(p *renderplan.Plan) string {
	for i := 1; i < len(p.Profiles); i++ {
		if p.Profiles[i-1].Name >= p.Profiles[i].Name {
			return fmt.Sprintf("profiles not sorted and unique at %q", p.Profiles[i].Name)
		}
	}
	for i := range p.Backends {
		if i > 0 && p.Backends[i-1].Name >= p.Backends[i].Name {
			return fmt.Sprintf("backends not sorted and unique at %q", p.Backends[i].Name)
		}
		s := p.Backends[i].Servers
		for k := 1; k < len(s); k++ {
			if s[k-1].Name >= s[k].Name {
				return fmt.Sprintf("servers of backend %q not sorted and unique at %q", p.Backends[i].Name, s[k].Name)
			}
		}
	}
	for i := 1; i < len(p.Maps); i++ {
		if p.Maps[i-1].Path >= p.Maps[i].Path {
			return fmt.Sprintf("maps not sorted and unique at %q", p.Maps[i].Path)
		}
	}
	for i := 1; i < len(p.Files); i++ {
		if p.Files[i-1].Path >= p.Files[i].Path {
			return fmt.Sprintf("files not sorted and unique at %q", p.Files[i].Path)
		}
	}
	return ""
}

// sortedUnique reports whether the keys of xs are strictly increasing.
func sortedUnique[E any](xs []E, key func(*E) string) bool {
	for i := 1; i < len(xs); i++ {
		if key(&xs[i-1]) >= key(&xs[i]) {
			return false
		}
	}
	return true
}

func profileName(p *renderplan.Profile) string { return p.Name }
func serverName(s *renderplan.Server) string   { return s.Name }
func mapPath(m *renderplan.Map) string         { return m.Path }
func filePath(f *renderplan.File) string       { return f.Path }

// opKinds is a set of op kinds: a bit mask for the kinds below 64 and a
// list for the rest, so that building it allocates nothing.
type opKinds struct {
	mask  uint64
	other []runtimeop.OpKind
}

func opKindSet(ks []runtimeop.OpKind) opKinds {
	var s opKinds
	for _, k := range ks {
		if k >= 0 && k < 64 {
			s.mask |= 1 << uint(k)
		} else {
			s.other = ks // rare: look in the list
		}
	}
	return s
}

func (s opKinds) has(k runtimeop.OpKind) bool {
	if k >= 0 && k < 64 {
		return s.mask&(1<<uint(k)) != 0
	}
	return slices.Contains(s.other, k)
}

func pendingSet(p []runtimeop.PendingDelete) map[runtimeop.PendingDelete]bool {
	if len(p) == 0 {
		return nil
	}
	m := make(map[runtimeop.PendingDelete]bool, len(p))
	for _, x := range p {
		m[x] = true
	}
	return m
}

// subjectOf names an op's object for a Reason.
func subjectOf(o runtimeop.Op) string {
	switch {
	case o.Server != "":
		return "server " + o.Backend + "/" + o.Server
	case o.Backend != "":
		return "backend " + o.Backend
	case o.Map != "":
		return "map " + o.Map
	case o.Cert != "":
		return "file " + o.Cert
	}
	return "op " + o.Kind.String()
}
