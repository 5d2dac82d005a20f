package deployplan_test

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/haptic-io/haptic/agentapi/runtimeop"
	"github.com/haptic-io/haptic/renderplan"
)

// model is HAProxy's runtime state as far as the ops touch it: backends
// (published or not) with their servers, maps and certificates. apply
// enforces the preconditions HAProxy enforces (measured, see
// haproxy-runtime-facts.md §3–§6) and the planner's own safety rules.
type model struct {
	profiles map[string]bool
	backends map[string]*modelBackend
	maps     map[string][]runtimeop.MapEntry
	ordered  map[string]bool
	certs    map[string]string // path → digest
	// pendingCert is the one open certificate transaction ("" if none).
	pendingCert, pendingDigest string
}

type modelBackend struct {
	Published  bool
	Profile    string
	Mode       string
	GUID       string
	Servers    map[string]modelServer
	Structural bool
	BodyDigest string
}

type modelServer struct {
	Address  string
	Port     int
	Weight   int
	State    runtimeop.ServerState
	Check    bool
	Health   bool
	Keywords string
}

// refusal is HAProxy's reply to a command it refused, verbatim (so it
// keeps HAProxy's capital letters and final period).
type refusal string

func (r refusal) Error() string { return string(r) }

func refusalf(format string, args ...any) error { return refusal(fmt.Sprintf(format, args...)) }

// modelOf is the state a fresh HAProxy started on p's files has: every
// backend published, servers ready unless disabled, health checks running
// where configured, maps and certificates as written.
func modelOf(p *renderplan.Plan) *model {
	m := &model{
		profiles: map[string]bool{},
		backends: map[string]*modelBackend{},
		maps:     map[string][]runtimeop.MapEntry{},
		ordered:  map[string]bool{},
		certs:    map[string]string{},
	}
	for _, pr := range p.Profiles {
		m.profiles[pr.Name] = true
	}
	for _, be := range p.Backends {
		mb := &modelBackend{Published: true, Profile: be.Profile, Mode: be.Mode, GUID: be.GUID, Servers: map[string]modelServer{},
			Structural: be.Shape == renderplan.ShapeStructural, BodyDigest: strings.Join(be.Body, "\n")}
		for _, s := range be.Servers {
			st := runtimeop.StateReady
			if s.Disabled {
				st = runtimeop.StateMaint
			}
			mb.Servers[s.Name] = modelServer{Address: s.Address, Port: s.Port, Weight: s.Weight, State: st, Check: s.Check, Health: s.Check, Keywords: strings.Join(s.Keywords, " ")}
		}
		m.backends[be.Name] = mb
	}
	for _, mp := range p.Maps {
		es := make([]runtimeop.MapEntry, len(mp.Entries))
		for i, e := range mp.Entries {
			es[i] = runtimeop.MapEntry{Key: e.Key, Value: e.Value}
		}
		m.maps[mp.Path] = es
		m.ordered[mp.Path] = mp.Ordered
	}
	for _, f := range p.Files {
		if f.Kind == renderplan.FileCert {
			m.certs[f.Path] = string(f.Digest)
		}
	}
	return m
}

func (m *model) server(be, s string) (*modelBackend, modelServer, error) {
	b, ok := m.backends[be]
	if !ok {
		return nil, modelServer{}, refusal("No such backend.")
	}
	srv, ok := b.Servers[s]
	if !ok {
		return nil, modelServer{}, refusal("No such server.")
	}
	return b, srv, nil
}

// apply runs one op the way HAProxy would, or says why HAProxy (or the
// planner's safety rules) would refuse it.
func (m *model) apply(o runtimeop.Op) error {
	switch o.Kind {
	case runtimeop.OpAddBackend:
		if _, dup := m.backends[o.Backend]; dup {
			return refusal("name is already used by other proxy")
		}
		if !m.profiles[o.Profile] {
			return refusalf("Cannot find default proxy '%s'.", o.Profile)
		}
		for name, b := range m.backends {
			if o.GUID != "" && b.GUID == o.GUID {
				return refusalf("GUID insertion : duplicate entry with backend %s", name)
			}
		}
		m.backends[o.Backend] = &modelBackend{Profile: o.Profile, Mode: o.Mode, GUID: o.GUID, Servers: map[string]modelServer{}}
	case runtimeop.OpAddServer:
		b, ok := m.backends[o.Backend]
		if !ok {
			return refusal("No such backend.")
		}
		if _, dup := b.Servers[o.Server]; dup {
			return refusal("Already exists a server with the same name in backend.")
		}
		b.Servers[o.Server] = modelServer{Address: o.Address, Port: o.Port, Weight: o.Weight, State: runtimeop.StateMaint, Check: o.Check, Keywords: strings.Join(o.Keywords, " ")}
	case runtimeop.OpSetServerState:
		b, s, err := m.server(o.Backend, o.Server)
		if err != nil {
			return err
		}
		s.State = o.State
		b.Servers[o.Server] = s
	case runtimeop.OpSetServerAddr:
		b, s, err := m.server(o.Backend, o.Server)
		if err != nil {
			return err
		}
		if s.State != runtimeop.StateMaint {
			return fmt.Errorf("planner rule: re-addressed serving server %s/%s (state %s)", o.Backend, o.Server, s.State)
		}
		s.Address, s.Port = o.Address, o.Port
		b.Servers[o.Server] = s
	case runtimeop.OpSetServerWeight:
		b, s, err := m.server(o.Backend, o.Server)
		if err != nil {
			return err
		}
		s.Weight = o.Weight
		b.Servers[o.Server] = s
	case runtimeop.OpEnableHealth:
		b, s, err := m.server(o.Backend, o.Server)
		if err != nil {
			return err
		}
		if !s.Check {
			return refusal("health checks are not configured on this server")
		}
		s.Health = true
		b.Servers[o.Server] = s
	case runtimeop.OpPublishBackend, runtimeop.OpUnpublishBackend:
		b, ok := m.backends[o.Backend]
		if !ok {
			return refusal("No such backend.")
		}
		b.Published = o.Kind == runtimeop.OpPublishBackend
	case runtimeop.OpAddMapEntry:
		es, ok := m.maps[o.Map]
		if !ok {
			return refusal("Unknown map identifier.")
		}
		m.maps[o.Map] = append(es, runtimeop.MapEntry{Key: o.Key, Value: o.Value}) // never de-duplicates
	case runtimeop.OpSetMapEntry:
		es, ok := m.maps[o.Map]
		if !ok {
			return refusal("Unknown map identifier.")
		}
		found := false
		for i := range es {
			if es[i].Key == o.Key {
				es[i].Value, found = o.Value, true
			}
		}
		if !found {
			return refusal("entry not found.")
		}
	case runtimeop.OpDelMapEntry:
		es, ok := m.maps[o.Map]
		if !ok {
			return refusal("Unknown map identifier.")
		}
		i := slices.IndexFunc(es, func(e runtimeop.MapEntry) bool { return e.Key == o.Key })
		if i < 0 {
			return refusal("Key not found.")
		}
		m.maps[o.Map] = slices.Delete(es, i, i+1) // 3.4.7: one copy per call
	case runtimeop.OpReplaceMap:
		if _, ok := m.maps[o.Map]; !ok {
			return refusal("Unknown map identifier.")
		}
		m.maps[o.Map] = slices.Clone(o.Entries)
	case runtimeop.OpNewCert:
		if _, dup := m.certs[o.Cert]; dup {
			return refusalf("Certificate '%s' already exists!", o.Cert)
		}
		m.certs[o.Cert] = ""
	case runtimeop.OpSetCert:
		if _, ok := m.certs[o.Cert]; !ok {
			return refusal("Can't replace a certificate which is not referenced by the configuration!")
		}
		if m.pendingCert != "" && m.pendingCert != o.Cert {
			return refusalf("The ongoing transaction is about '%s' but you are trying to set '%s'", m.pendingCert, o.Cert)
		}
		m.pendingCert, m.pendingDigest = o.Cert, o.Digest
	case runtimeop.OpCommitCert:
		if m.pendingCert != o.Cert {
			return refusal("No ongoing transaction!")
		}
		m.certs[o.Cert] = m.pendingDigest
		m.pendingCert, m.pendingDigest = "", ""
	case runtimeop.OpDelServer:
		b, s, err := m.server(o.Backend, o.Server)
		if err != nil {
			return err
		}
		// The op sets maint first, so HAProxy's "only servers in
		// maintenance mode can be deleted" holds; the agent waits for
		// srv-removable. A removable server is assumed here.
		_ = s
		delete(b.Servers, o.Server)
	case runtimeop.OpDelBackend:
		b, ok := m.backends[o.Backend]
		switch {
		case !ok:
			return refusal("No such backend.")
		case b.Published:
			return refusal("Backend must be unpublished prior to its deletion.")
		case len(b.Servers) > 0:
			return refusal("Only a backend without server can be deleted.")
		}
		delete(m.backends, o.Backend)
	default:
		return fmt.Errorf("model does not implement %s", o.Kind)
	}
	return nil
}

// comparable returns the observable state: unordered maps as sorted entry
// lists, and only the certificates named in keepCerts (a certificate that
// nothing loaded names is not observable).
func (m *model) comparable(keepCerts func(string) bool) map[string]any {
	maps2 := map[string][]runtimeop.MapEntry{}
	for path, es := range m.maps {
		es = slices.Clone(es)
		if !m.ordered[path] {
			slices.SortStableFunc(es, func(a, b runtimeop.MapEntry) int { return strings.Compare(a.Key, b.Key) })
		}
		maps2[path] = es
	}
	certs := map[string]string{}
	for p, d := range m.certs {
		if keepCerts(p) {
			certs[p] = d
		}
	}
	backends := map[string]modelBackend{}
	for name, b := range m.backends {
		c := *b
		c.Servers = maps.Clone(b.Servers)
		backends[name] = c
	}
	return map[string]any{"backends": backends, "maps": maps2, "certs": certs, "pendingCert": m.pendingCert}
}

// routingProblem checks the no-drop rule after an op: every map entry that
// base did not have points at a backend that exists, is published, and
// has a ready server when next gives it one.
func (m *model) routingProblem(base, next *renderplan.Plan) string {
	for path, es := range m.maps {
		old := map[runtimeop.MapEntry]bool{}
		if bm, ok := base.Map(path); ok {
			for _, e := range bm.Entries {
				old[runtimeop.MapEntry{Key: e.Key, Value: e.Value}] = true
			}
		}
		for _, e := range es {
			if old[e] {
				continue
			}
			nb, inNext := next.Backend(e.Value)
			if !inNext {
				continue
			}
			b, ok := m.backends[e.Value]
			if !ok || !b.Published {
				return fmt.Sprintf("map %s routes %s to %s, which is not a published backend", path, e.Key, e.Value)
			}
			wantReady := slices.ContainsFunc(nb.Servers, func(s renderplan.Server) bool { return !s.Disabled })
			hasReady := false
			for _, s := range b.Servers {
				hasReady = hasReady || s.State == runtimeop.StateReady
			}
			if wantReady && !hasReady {
				return fmt.Sprintf("map %s routes %s to %s, which has no ready server", path, e.Key, e.Value)
			}
		}
	}
	return ""
}
