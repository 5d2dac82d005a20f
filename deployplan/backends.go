package deployplan

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/haptic-io/haptic/agentapi/runtimeop"
	"github.com/haptic-io/haptic/renderplan"
)

// diffBackends merges the two sorted backend lists in step. It reports
// false as soon as it meets a backend list or a server list that is not
// sorted and unique; the differ is then to be thrown away.
//
// Each element's order against its predecessor is checked as it is
// consumed, but a backend that pairs with one of the same name right
// after another pair needs only the next plan's check: equal names on
// both sides order alike.
func (d *differ) diffBackends() bool {
	a, b := d.base.Backends, d.next.Backends
	i, j := 0, 0
	paired := false // the last step consumed a[i-1] and b[j-1], of one name
	for i < len(a) && j < len(b) {
		x, y := &a[i], &b[j]
		if x.Name == y.Name {
			if j > 0 && b[j-1].Name >= y.Name || !paired && i > 0 && a[i-1].Name >= x.Name {
				return false
			}
			same := serversEqual(x.Servers, y.Servers)
			// Equal server lists have equal names, so one check covers both.
			if !sortedUnique(y.Servers, serverName) || !same && !sortedUnique(x.Servers, serverName) {
				return false
			}
			d.changeBackend(x, y, same)
			i, j, paired = i+1, j+1, true
			continue
		}
		paired = false
		if x.Name < y.Name {
			if !d.removed(a, i) {
				return false
			}
			i++
		} else {
			if !d.added(b, j) {
				return false
			}
			j++
		}
	}
	for ; i < len(a); i++ {
		if !d.removed(a, i) {
			return false
		}
	}
	for ; j < len(b); j++ {
		if !d.added(b, j) {
			return false
		}
	}
	return true
}

// removed checks a[i] against its predecessor and its servers, then
// records its removal.
func (d *differ) removed(a []renderplan.Backend, i int) bool {
	if i > 0 && a[i-1].Name >= a[i].Name || !sortedUnique(a[i].Servers, serverName) {
		return false
	}
	d.sectionsChanged = true
	d.removeBackend(&a[i])
	return true
}

// added checks b[j] against its predecessor and its servers, then records
// its addition.
func (d *differ) added(b []renderplan.Backend, j int) bool {
	if j > 0 && b[j-1].Name >= b[j].Name || !sortedUnique(b[j].Servers, serverName) {
		return false
	}
	d.sectionsChanged = true
	d.addBackend(&b[j])
	return true
}

// serversEqual reports whether two server lists are equal element by
// element; the same backing array (plans built by one
// [renderplan.Cache] share unchanged backends' servers) is equal
// without a look.
func serversEqual(sa, sb []renderplan.Server) bool {
	if len(sa) != len(sb) {
		return false
	}
	if len(sa) == 0 || &sa[0] == &sb[0] {
		return true
	}
	for k := range sa {
		if !sa[k].Equal(sb[k]) {
			return false
		}
	}
	return true
}

func (d *differ) removeBackend(be *renderplan.Backend) {
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
	d.runtime(subject, "dynamic backend removed (%s)", plural(len(be.Servers), "server"))
}

func (d *differ) addBackend(be *renderplan.Backend) {
	subject := "backend " + be.Name
	switch {
	case be.Shape != renderplan.ShapeDynamic:
		d.mustReload(subject, "structural backend added (%s)", shapeReason(be))
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
	d.runtime(subject, "dynamic backend added (%s)", plural(len(be.Servers), "server"))
}

// pendingIn reports whether a delete of the backend or of one of its
// servers is pending.
func (d *differ) pendingIn(backend string) bool {
	for p := range d.pending {
		if p.Backend == backend {
			return true
		}
	}
	return false
}

func shapeReason(be *renderplan.Backend) string {
	if be.ShapeReason != "" {
		return be.ShapeReason
	}
	return string(be.Shape)
}

// baseGUIDOwner returns the name of the base backend holding guid (the
// last one, should several), or "". The first few lookups scan the base
// backends from the end, which allocates nothing; a diff that adds many
// backends builds a map once.
func (d *differ) baseGUIDOwner(guid string) string {
	const scans = 8
	if d.guidLookups++; d.guidLookups <= scans {
		bs := d.base.Backends
		for k := len(bs) - 1; k >= 0; k-- {
			if bs[k].GUID == guid {
				return bs[k].Name
			}
		}
		return ""
	}
	if d.baseGUIDs == nil {
		d.baseGUIDs = make(map[string]string, len(d.base.Backends))
		for _, be := range d.base.Backends {
			d.baseGUIDs[be.GUID] = be.Name
		}
	}
	return d.baseGUIDs[guid]
}

// changeBackend compares two backends of one name; sameServers says
// their server lists are equal.
func (d *differ) changeBackend(a, b *renderplan.Backend, sameServers bool) {
	// The common case, nothing but servers to compare, allocates nothing.
	if a.Shape == b.Shape && a.Profile == b.Profile && a.Mode == b.Mode && a.GUID == b.GUID && slices.Equal(a.Body, b.Body) {
		if !sameServers {
			d.diffServers(a, b)
		}
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

// diffServers merges the two sorted server lists of one backend, which
// differ.
func (d *differ) diffServers(a, b *renderplan.Backend) {
	sa, sb := a.Servers, b.Servers
	var added, removed, changed int
	staticLB := ""
	i, j := 0, 0
	for i < len(sa) || j < len(sb) {
		c := mergeStep(len(sa)-i, len(sb)-j, func() int { return strings.Compare(sa[i].Name, sb[j].Name) })
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
		staticLB = staticBalance(b.Body)
	}
	if staticLB != "" && added+removed > 0 {
		d.mustReload(subject, "servers added or removed, but %q cannot take dynamic servers", staticLB)
		return
	}

	i, j = 0, 0
	for i < len(sa) || j < len(sb) {
		c := mergeStep(len(sa)-i, len(sb)-j, func() int { return strings.Compare(sa[i].Name, sb[j].Name) })
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
	d.runtime(subject, "servers: %s", countPhrase(added, removed, changed))
}

// addServer emits the ops that create s in be and bring it to the state a
// reload would give it. It reports false (after recording a reload) when
// that cannot be done at runtime.
func (d *differ) addServer(be *renderplan.Backend, s *renderplan.Server) bool {
	subject := "server " + be.Name + "/" + s.Name
	if d.pending[runtimeop.PendingDelete{Backend: be.Name, Server: s.Name}] {
		d.mustReload(subject, "added while the pod still waits to delete a server of that name")
		return false
	}
	if !isIP(s.Address) {
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
func (d *differ) runtimeKeywordProblem(keywords []string) string {
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
func (d *differ) changeServer(be *renderplan.Backend, a, b *renderplan.Server, staticLB string) bool {
	subject := "server " + be.Name + "/" + b.Name
	switch {
	case a.Check != b.Check:
		d.mustReload(subject, "health check switched %s", onOff(b.Check))
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
		if !isIP(b.Address) {
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

// staticBalance returns the "balance …" line of a structural backend's
// body when its algorithm is static (no dynamic servers, no weight
// changes), or "".
func staticBalance(body []string) string {
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

func isIP(s string) bool {
	a, err := netip.ParseAddr(s)
	return err == nil && a.Zone() == ""
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

func countPhrase(added, removed, changed int) string {
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

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// mergeStep tells a merge of two sorted lists which side comes next:
// negative for the left (only in the old list), positive for the right
// (only in the new one), zero for both. restA and restB are the items left
// on each side; cmp compares the current items and runs only when both
// sides have one.
func mergeStep(restA, restB int, cmp func() int) int {
	switch {
	case restB == 0:
		return -1
	case restA == 0:
		return 1
	}
	return cmp()
}
