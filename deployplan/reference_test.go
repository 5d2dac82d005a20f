package deployplan

// This file keeps Diff as it was before the in-step rewrite (diff.go,
// backends.go, maps.go and files.go of that version, renamed), as the
// reference the differential test compares Diff with. Do not optimize it.

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/haptic-io/haptic/agentapi/runtimeop"
	"github.com/haptic-io/haptic/renderplan"
)

// refDiff is Diff as it was before the in-step rewrite: the same rules,
// found by building sets and merging lists in separate passes.
func refDiff(next *renderplan.Plan, base Baseline) Decision {
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
	if p := refCanonicalProblem(next); p != "" {
		return reload("plan", "%s: full state", p)
	}
	if p := refCanonicalProblem(base.Plan); p != "" {
		return reload("baseline", "%s: full state", p)
	}

	d := &refDiffer{base: base.Plan, next: next, caps: caps}
	d.pending = refPendingSet(base.PendingDeletes)
	d.diffCore()
	d.diffProfiles()
	d.diffBackends()
	d.diffMaps()
	d.diffFiles()

	if len(d.reloads) > 0 {
		return Decision{Verdict: VerdictReload, Files: files, Reasons: d.reloads}
	}
	sortOps(d.ops)

	// Rule 2, continued: ops the pod cannot execute, or too many of them.
	supported := make(map[runtimeop.OpKind]bool, len(base.AgentOps))
	for _, k := range base.AgentOps {
		supported[k] = true
	}
	for _, o := range d.ops {
		if !supported[o.Kind] {
			return reload("agent", "does not support op kind %s", o.Kind)
		}
		if err := o.Validate(); err != nil {
			return reload(refSubjectOf(o), "cannot be changed at runtime: %v", err)
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

// refDiffer accumulates the result of one Diff.
type refDiffer struct {
	base, next *renderplan.Plan
	caps       Capabilities
	pending    map[runtimeop.PendingDelete]bool

	ops     []runtimeop.Op
	reasons []Reason // runtime and file_only changes
	reloads []Reason // what forces a reload

	// sectionsChanged records that some section of haproxy.cfg changed,
	// which explains a change of haproxy.cfg's digest.
	sectionsChanged bool
	// baseGUIDs maps the base plan's backend guids to their backends;
	// built on first use.
	baseGUIDs map[string]string
}

func (d *refDiffer) mustReload(subject, format string, args ...any) {
	d.reloads = append(d.reloads, Reason{Subject: subject, Message: fmt.Sprintf(format, args...), Verdict: VerdictReload})
}

func (d *refDiffer) runtime(subject, format string, args ...any) {
	d.reasons = append(d.reasons, Reason{Subject: subject, Message: fmt.Sprintf(format, args...), Verdict: VerdictRuntime})
}

func (d *refDiffer) fileOnly(subject, format string, args ...any) {
	d.reasons = append(d.reasons, Reason{Subject: subject, Message: fmt.Sprintf(format, args...), Verdict: VerdictFileOnly})
}

func (d *refDiffer) emit(ops ...runtimeop.Op) { d.ops = append(d.ops, ops...) }

// diffCore compares the core sections of haproxy.cfg in file order.
func (d *refDiffer) diffCore() {
	var a, b []renderplan.Digest
	for _, s := range d.base.Sections {
		if s.Kind == renderplan.SectionCore {
			a = append(a, s.Digest)
		}
	}
	for _, s := range d.next.Sections {
		if s.Kind == renderplan.SectionCore {
			b = append(b, s.Digest)
		}
	}
	if slices.Equal(a, b) {
		return
	}
	d.sectionsChanged = true
	if len(a) != len(b) {
		d.mustReload("core", "haproxy.cfg has %d core sections, had %d", len(b), len(a))
		return
	}
	for i := range a {
		if a[i] != b[i] {
			d.mustReload("core", "section %d of %d (global, defaults, frontends) changed", i+1, len(a))
		}
	}
}

func (d *refDiffer) diffProfiles() {
	a, b := d.base.Profiles, d.next.Profiles
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
}

// refCanonicalProblem checks what Diff relies on: names and paths sorted and
// unique. It is linear and far cheaper than [renderplan.Plan.Validate].
func refCanonicalProblem(p *renderplan.Plan) string {
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

func refPendingSet(p []runtimeop.PendingDelete) map[runtimeop.PendingDelete]bool {
	if len(p) == 0 {
		return nil
	}
	m := make(map[runtimeop.PendingDelete]bool, len(p))
	for _, x := range p {
		m[x] = true
	}
	return m
}

// refSubjectOf names an op's object for a Reason.
func refSubjectOf(o runtimeop.Op) string {
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

// diffBackends merges the two sorted backend lists.
func (d *refDiffer) diffBackends() {
	a, b := d.base.Backends, d.next.Backends
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		c := refMergeStep(len(a)-i, len(b)-j, func() int { return strings.Compare(a[i].Name, b[j].Name) })
		switch {
		case c < 0:
			d.sectionsChanged = true
			d.removeBackend(&a[i])
			i++
		case c > 0:
			d.sectionsChanged = true
			d.addBackend(&b[j])
			j++
		default:
			d.changeBackend(&a[i], &b[j])
			i++
			j++
		}
	}
}

func (d *refDiffer) removeBackend(be *renderplan.Backend) {
	subject := "backend " + be.Name
	switch {
	case be.Shape != renderplan.ShapeDynamic:
		d.mustReload(subject, "structural backend removed")
		return
	case !d.caps.DynamicBackends:
		d.mustReload(subject, "dynamic backend removed; HAProxy %s cannot delete backends at runtime (3.4+)", d.caps.Series)
		return
	}
	d.emit(runtimeop.Op{Kind: runtimeop.OpUnpublishBackend, Backend: be.Name})
	for _, s := range be.Servers {
		d.emit(runtimeop.Op{Kind: runtimeop.OpDelServer, Backend: be.Name, Server: s.Name})
	}
	d.emit(runtimeop.Op{Kind: runtimeop.OpDelBackend, Backend: be.Name})
	d.runtime(subject, "dynamic backend removed (%s)", refPlural(len(be.Servers), "server"))
}

func (d *refDiffer) addBackend(be *renderplan.Backend) {
	subject := "backend " + be.Name
	switch {
	case be.Shape != renderplan.ShapeDynamic:
		d.mustReload(subject, "structural backend added (%s)", refShapeReason(be))
		return
	case !d.caps.DynamicBackends:
		d.mustReload(subject, "dynamic backend added; HAProxy %s cannot add backends at runtime (3.4+)", d.caps.Series)
		return
	case d.pendingIn(be.Name):
		d.mustReload(subject, "added while the pod still waits to delete a backend of that name or its servers")
		return
	}
	if owner := d.baseGUIDOwner(be.GUID); owner != "" {
		d.mustReload(subject, "guid %s is still held by backend %s until that one is deleted", be.GUID, owner)
		return
	}
	d.emit(runtimeop.Op{Kind: runtimeop.OpAddBackend, Backend: be.Name, Profile: be.Profile, Mode: be.Mode, GUID: be.GUID})
	for i := range be.Servers {
		if !d.addServer(be, &be.Servers[i]) {
			return
		}
	}
	d.emit(runtimeop.Op{Kind: runtimeop.OpPublishBackend, Backend: be.Name})
	d.runtime(subject, "dynamic backend added (%s)", refPlural(len(be.Servers), "server"))
}

// pendingIn reports whether a delete of the backend or of one of its
// servers is pending.
func (d *refDiffer) pendingIn(backend string) bool {
	for p := range d.pending {
		if p.Backend == backend {
			return true
		}
	}
	return false
}

func refShapeReason(be *renderplan.Backend) string {
	if be.ShapeReason != "" {
		return be.ShapeReason
	}
	return string(be.Shape)
}

func (d *refDiffer) baseGUIDOwner(guid string) string {
	if d.baseGUIDs == nil {
		d.baseGUIDs = make(map[string]string, len(d.base.Backends))
		for _, be := range d.base.Backends {
			d.baseGUIDs[be.GUID] = be.Name
		}
	}
	return d.baseGUIDs[guid]
}

func (d *refDiffer) changeBackend(a, b *renderplan.Backend) {
	// The common case, nothing but servers to compare, allocates nothing.
	if a.Shape == b.Shape && a.Profile == b.Profile && a.Mode == b.Mode && a.GUID == b.GUID && slices.Equal(a.Body, b.Body) {
		d.diffServers(a, b)
		return
	}
	subject := "backend " + a.Name
	switch {
	case a.Shape != b.Shape:
		d.mustReload(subject, "shape changed from %s to %s", a.Shape, b.Shape)
	case !slices.Equal(a.Body, b.Body):
		d.mustReload(subject, "body changed")
	}
	if a.Profile != b.Profile {
		d.mustReload(subject, "profile changed from %s to %s", a.Profile, b.Profile)
	}
	if a.Mode != b.Mode {
		d.mustReload(subject, "mode changed from %s to %s", a.Mode, b.Mode)
	}
	if a.GUID != b.GUID {
		d.mustReload(subject, "guid changed")
	}
	d.sectionsChanged = true
}

// diffServers merges the two sorted server lists of one backend.
func (d *refDiffer) diffServers(a, b *renderplan.Backend) {
	sa, sb := a.Servers, b.Servers
	if len(sa) == len(sb) {
		same := true
		for k := range sa {
			if !sa[k].Equal(sb[k]) {
				same = false
				break
			}
		}
		if same {
			return
		}
	}
	var added, removed, changed int
	staticLB := ""
	i, j := 0, 0
	for i < len(sa) || j < len(sb) {
		c := refMergeStep(len(sa)-i, len(sb)-j, func() int { return strings.Compare(sa[i].Name, sb[j].Name) })
		switch {
		case c < 0:
			removed++
			i++
		case c > 0:
			added++
			j++
		default:
			if !sa[i].Equal(sb[j]) {
				changed++
			}
			i++
			j++
		}
	}
	if added+removed+changed == 0 {
		return
	}
	d.sectionsChanged = true
	subject := "backend " + b.Name
	if added+removed > 0 || changed > 0 {
		staticLB = refStaticBalance(b.Body)
	}
	if staticLB != "" && added+removed > 0 {
		d.mustReload(subject, "servers added or removed, but %q cannot take dynamic servers", staticLB)
		return
	}

	i, j = 0, 0
	for i < len(sa) || j < len(sb) {
		c := refMergeStep(len(sa)-i, len(sb)-j, func() int { return strings.Compare(sa[i].Name, sb[j].Name) })
		switch {
		case c < 0:
			d.emit(runtimeop.Op{Kind: runtimeop.OpDelServer, Backend: b.Name, Server: sa[i].Name})
			i++
		case c > 0:
			if !d.addServer(b, &sb[j]) {
				return
			}
			j++
		default:
			if !sa[i].Equal(sb[j]) && !d.changeServer(b, &sa[i], &sb[j], staticLB) {
				return
			}
			i++
			j++
		}
	}
	d.runtime(subject, "servers: %s", refCountPhrase(added, removed, changed))
}

// addServer emits the ops that create s in be and bring it to the state a
// reload would give it. It reports false (after recording a reload) when
// that cannot be done at runtime.
func (d *refDiffer) addServer(be *renderplan.Backend, s *renderplan.Server) bool {
	subject := "server " + be.Name + "/" + s.Name
	if d.pending[runtimeop.PendingDelete{Backend: be.Name, Server: s.Name}] {
		d.mustReload(subject, "added while the pod still waits to delete a server of that name")
		return false
	}
	if !refIsIP(s.Address) {
		d.mustReload(subject, "address %q is not an IP address; a server added at runtime would never resolve it", s.Address)
		return false
	}
	if p := d.runtimeKeywordProblem(s.Keywords); p != "" {
		d.mustReload(subject, "%s", p)
		return false
	}
	d.emit(runtimeop.Op{Kind: runtimeop.OpAddServer, Backend: be.Name, Server: s.Name, Address: s.Address, Port: s.Port,
		Weight: s.Weight, Check: s.Check, Keywords: slices.Clone(s.Keywords)})
	if !s.Disabled {
		d.emit(runtimeop.Op{Kind: runtimeop.OpSetServerState, Backend: be.Name, Server: s.Name, State: runtimeop.StateReady})
	}
	if s.Check {
		d.emit(runtimeop.Op{Kind: runtimeop.OpEnableHealth, Backend: be.Name, Server: s.Name})
	}
	return true
}

// runtimeKeywordProblem says why "add server" would refuse or mistreat a
// server with these keywords, or "".
func (d *refDiffer) runtimeKeywordProblem(keywords []string) string {
	for _, k := range keywords {
		switch {
		case k == "resolvers":
			return `keyword "resolvers" is not accepted for servers added at runtime`
		case k == "track":
			return `keyword "track" would make the tracked server undeletable at runtime`
		case k == "init-state" && !d.caps.ServerInitState:
			return fmt.Sprintf(`keyword "init-state" is unknown to HAProxy %s`, d.caps.Series)
		}
	}
	return ""
}

// changeServer emits the ops that take a server from a to b. An address
// change never reaches a serving server: maint, addr, then ready.
func (d *refDiffer) changeServer(be *renderplan.Backend, a, b *renderplan.Server, staticLB string) bool {
	subject := "server " + be.Name + "/" + b.Name
	switch {
	case a.Check != b.Check:
		d.mustReload(subject, "health check switched %s", refOnOff(b.Check))
		return false
	case !slices.Equal(a.Keywords, b.Keywords):
		d.mustReload(subject, "keywords changed from %q to %q", strings.Join(a.Keywords, " "), strings.Join(b.Keywords, " "))
		return false
	case a.Weight != b.Weight && staticLB != "":
		d.mustReload(subject, "weight changed, but %q has static weights", staticLB)
		return false
	}
	target := func(s *renderplan.Server) runtimeop.ServerState {
		if s.Disabled {
			return runtimeop.StateMaint
		}
		return runtimeop.StateReady
	}
	readdress := a.Address != b.Address || a.Port != b.Port
	if readdress {
		if !refIsIP(b.Address) {
			d.mustReload(subject, "address %q is not an IP address", b.Address)
			return false
		}
		if !a.Disabled {
			d.emit(runtimeop.Op{Kind: runtimeop.OpSetServerState, Backend: be.Name, Server: b.Name, State: runtimeop.StateMaint})
		}
		d.emit(runtimeop.Op{Kind: runtimeop.OpSetServerAddr, Backend: be.Name, Server: b.Name, Address: b.Address, Port: b.Port})
	}
	if a.Weight != b.Weight {
		d.emit(runtimeop.Op{Kind: runtimeop.OpSetServerWeight, Backend: be.Name, Server: b.Name, Weight: b.Weight})
	}
	switch {
	case readdress && !b.Disabled:
		d.emit(runtimeop.Op{Kind: runtimeop.OpSetServerState, Backend: be.Name, Server: b.Name, State: runtimeop.StateReady})
	case !readdress && a.Disabled != b.Disabled:
		d.emit(runtimeop.Op{Kind: runtimeop.OpSetServerState, Backend: be.Name, Server: b.Name, State: target(b)})
	}
	return true
}

// refStaticBalance returns the "balance …" line of a structural backend's
// body when its algorithm is static (no dynamic servers, no weight
// changes), or "".
func refStaticBalance(body []string) string {
	line, algo, consistent := "", "", false
	for _, l := range body {
		f := strings.Fields(l)
		if len(f) >= 2 && f[0] == "balance" {
			line, algo = l, f[1]
		}
		if len(f) >= 2 && f[0] == "hash-type" && f[1] == "consistent" {
			consistent = true
		}
	}
	switch {
	case algo == "", algo == "roundrobin", algo == "leastconn", algo == "first", algo == "random":
		return ""
	case algo == "static-rr":
		return line
	case consistent: // hash algorithms with consistent hashing are dynamic
		return ""
	}
	return line
}

func refIsIP(s string) bool {
	a, err := netip.ParseAddr(s)
	return err == nil && a.Zone() == ""
}

func refOnOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

func refCountPhrase(added, removed, changed int) string {
	var parts []string
	if added > 0 {
		parts = append(parts, fmt.Sprintf("%d added", added))
	}
	if changed > 0 {
		parts = append(parts, fmt.Sprintf("%d changed", changed))
	}
	if removed > 0 {
		parts = append(parts, fmt.Sprintf("%d removed", removed))
	}
	return strings.Join(parts, ", ")
}

func refPlural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// refMergeStep tells a merge of two sorted lists which side comes next:
// negative for the left (only in the old list), positive for the right
// (only in the new one), zero for both. restA and restB are the items left
// on each side; cmp compares the current items and runs only when both
// sides have one.
func refMergeStep(restA, restB int, cmp func() int) int {
	switch {
	case restB == 0:
		return -1
	case restA == 0:
		return 1
	}
	return cmp()
}

// diffMaps merges the two sorted map lists.
func (d *refDiffer) diffMaps() {
	a, b := d.base.Maps, d.next.Maps
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case j == len(b) || i < len(a) && a[i].Path < b[j].Path:
			d.mustReload("map "+a[i].Path, "removed (HAProxy loads map files only at startup)")
			i++
		case i == len(a) || b[j].Path < a[i].Path:
			d.mustReload("map "+b[j].Path, "added (HAProxy loads map files only at startup)")
			j++
		default:
			d.changeMap(&a[i], &b[j])
			i++
			j++
		}
	}
}

func (d *refDiffer) changeMap(a, b *renderplan.Map) {
	subject := "map " + b.Path
	if a.Ordered || b.Ordered || !refUniqueSorted(a.Entries) || !refUniqueSorted(b.Entries) {
		if refEntriesEqual(a.Entries, b.Entries) {
			return
		}
		d.emit(refReplaceMap(b))
		d.runtime(subject, "ordered map changed (%d entries), replaced atomically", len(b.Entries))
		return
	}

	// Unordered, unique keys: per-entry upserts and deletes. "set" for
	// existing keys and "add" only for new ones, so no key is ever
	// duplicated (3.4.7's "del map" would remove only one copy).
	var adds, sets, dels int
	x, y := a.Entries, b.Entries
	i, j := 0, 0
	for i < len(x) || j < len(y) {
		c := refMergeStep(len(x)-i, len(y)-j, func() int { return strings.Compare(x[i].Key, y[j].Key) })
		switch {
		case c < 0:
			dels++
			i++
		case c > 0:
			adds++
			j++
		default:
			if x[i].Value != y[j].Value {
				sets++
			}
			i++
			j++
		}
	}
	changes := adds + sets + dels
	if changes == 0 {
		return
	}
	if mapReplaceWorthIt(changes, len(y)) {
		d.emit(refReplaceMap(b))
		d.runtime(subject, "%s; replaced atomically (%d entries)", refCountPhrase(adds, dels, sets), len(y))
		return
	}
	i, j = 0, 0
	for i < len(x) || j < len(y) {
		c := refMergeStep(len(x)-i, len(y)-j, func() int { return strings.Compare(x[i].Key, y[j].Key) })
		switch {
		case c < 0:
			d.emit(runtimeop.Op{Kind: runtimeop.OpDelMapEntry, Map: b.Path, Key: x[i].Key})
			i++
		case c > 0:
			d.emit(runtimeop.Op{Kind: runtimeop.OpAddMapEntry, Map: b.Path, Key: y[j].Key, Value: y[j].Value})
			j++
		default:
			if x[i].Value != y[j].Value {
				d.emit(runtimeop.Op{Kind: runtimeop.OpSetMapEntry, Map: b.Path, Key: y[j].Key, Value: y[j].Value})
			}
			i++
			j++
		}
	}
	d.runtime(subject, "entries: %s", refCountPhrase(adds, dels, sets))
}

func refReplaceMap(m *renderplan.Map) runtimeop.Op {
	entries := make([]runtimeop.MapEntry, len(m.Entries))
	for i, e := range m.Entries {
		entries[i] = runtimeop.MapEntry{Key: e.Key, Value: e.Value}
	}
	return runtimeop.Op{Kind: runtimeop.OpReplaceMap, Map: m.Path, Entries: entries}
}

func refUniqueSorted(e []renderplan.MapEntry) bool {
	for i := 1; i < len(e); i++ {
		if e[i-1].Key >= e[i].Key {
			return false
		}
	}
	return true
}

func refEntriesEqual(a, b []renderplan.MapEntry) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// diffFiles merges the two sorted file lists. haproxy.cfg is judged by its
// sections and map files by their entries; every other file by its kind.
func (d *refDiffer) diffFiles() {
	a, b := d.base.Files, d.next.Files
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case j == len(b) || i < len(a) && a[i].Path < b[j].Path:
			d.fileGone(&a[i])
			i++
		case i == len(a) || b[j].Path < a[i].Path:
			d.fileNew(&b[j])
			j++
		default:
			if a[i] != b[j] {
				d.fileChanged(&a[i], &b[j])
			}
			i++
			j++
		}
	}
}

func (d *refDiffer) isMapFile(f *renderplan.File) bool {
	if f.Kind != renderplan.FileMap {
		return false
	}
	_, inBase := d.base.Map(f.Path)
	_, inNext := d.next.Map(f.Path)
	return inBase || inNext
}

func (d *refDiffer) fileGone(f *renderplan.File) {
	subject := "file " + f.Path
	switch {
	case f.Kind == renderplan.FileConfig:
		d.mustReload(subject, "removed")
	case d.isMapFile(f):
		// diffMaps decided.
	case f.Kind == renderplan.FileCrtList:
		d.mustReload(subject, "crt-list removed")
	case f.ReloadOnChange:
		d.mustReload(subject, "removed (reloadOnChange)")
	default:
		d.fileOnly(subject, "removed; the running HAProxy keeps what it loaded")
	}
}

func (d *refDiffer) fileNew(f *renderplan.File) {
	subject := "file " + f.Path
	switch {
	case f.Kind == renderplan.FileConfig:
		d.mustReload(subject, "added")
	case d.isMapFile(f):
	case f.Kind == renderplan.FileCrtList:
		d.mustReload(subject, "crt-list added")
	case f.ReloadOnChange:
		d.mustReload(subject, "added (reloadOnChange)")
	case f.Kind == renderplan.FileCert:
		d.fileOnly(subject, "certificate added; nothing the running HAProxy loaded names it (a crt-list or configuration change would)")
	default:
		d.fileOnly(subject, "added")
	}
}

func (d *refDiffer) fileChanged(a, b *renderplan.File) {
	subject := "file " + b.Path
	switch {
	case a.Kind != b.Kind:
		d.mustReload(subject, "kind changed from %s to %s", a.Kind, b.Kind)
	case b.Kind == renderplan.FileConfig:
		if a.Digest != b.Digest && !d.sectionsChanged {
			d.mustReload(subject, "changed outside its recorded sections")
		}
	case d.isMapFile(b):
	case b.Kind == renderplan.FileCrtList:
		d.mustReload(subject, "crt-list changed; plans carry no crt-list entries, so only a reload applies it")
	case a.ReloadOnChange || b.ReloadOnChange:
		d.mustReload(subject, "changed (reloadOnChange)")
	case a.Digest == b.Digest:
		// Only metadata such as reloadOnChange moved: nothing to apply.
		d.fileOnly(subject, "metadata changed")
	case b.Kind == renderplan.FileCert:
		d.emit(
			runtimeop.Op{Kind: runtimeop.OpSetCert, Cert: b.Path, Digest: string(b.Digest)},
			runtimeop.Op{Kind: runtimeop.OpCommitCert, Cert: b.Path},
		)
		d.runtime(subject, "certificate changed")
	default:
		d.fileOnly(subject, "changed; HAProxy reads it only at startup and it asks for no reload")
	}
}
