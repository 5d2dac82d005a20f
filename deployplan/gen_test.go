package deployplan_test

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"

	"github.com/haptic-io/haptic/renderplan"
)

// spec is a small description of a plan that random tests generate and
// mutate; build turns it into a real plan through renderplan.Builder.
type spec struct {
	core, profile int
	backends      map[string]*specBackend
	hosts         map[string]string // unordered map: key → backend
	paths         [][2]string       // ordered map
	certs         map[string]int    // path → body version
	general       int
}

type specBackend struct {
	guid       string
	structural bool
	body       int
	servers    map[string]specServer
}

type specServer struct {
	addr     string
	port     int
	weight   int
	disabled bool
	check    bool
	keywords bool
}

func (s *spec) clone() *spec {
	c := *s
	c.backends = map[string]*specBackend{}
	for n, b := range s.backends {
		bb := *b
		bb.servers = maps.Clone(b.servers)
		c.backends[n] = &bb
	}
	c.hosts = maps.Clone(s.hosts)
	c.paths = slices.Clone(s.paths)
	c.certs = maps.Clone(s.certs)
	return &c
}

var (
	genBackends = []string{"be0", "be1", "be2", "be3", "be4", "be5"}
	genServers  = []string{"s0", "s1", "s2", "s3"}
	genAddrs    = []string{"10.0.0.1", "10.0.0.2", "10.0.0.3", "2001:db8::7"}
	genHosts    = []string{"a.test", "b.test", "c.test", "d.test", "e.test", "f.test"}
)

func pick[T any](r *rand.Rand, xs []T) T { return xs[r.IntN(len(xs))] }

func randServer(r *rand.Rand) specServer {
	return specServer{addr: pick(r, genAddrs), port: pick(r, []int{80, 8080}), weight: pick(r, []int{0, 1, 1, 5}),
		disabled: r.IntN(5) == 0, check: r.IntN(3) == 0, keywords: r.IntN(8) == 0}
}

func randBackend(r *rand.Rand, name string) *specBackend {
	b := &specBackend{guid: "g-" + name, structural: r.IntN(6) == 0, servers: map[string]specServer{}}
	for _, s := range genServers {
		if r.IntN(2) == 0 {
			b.servers[s] = randServer(r)
		}
	}
	return b
}

func randSpec(r *rand.Rand) *spec {
	s := &spec{backends: map[string]*specBackend{}, hosts: map[string]string{}, certs: map[string]int{}}
	for _, n := range genBackends {
		if r.IntN(3) > 0 {
			s.backends[n] = randBackend(r, n)
		}
	}
	for _, c := range []string{"certs/a.pem", "certs/b.pem"} {
		if r.IntN(2) == 0 {
			s.certs[c] = 0
		}
	}
	s.fixRoutes(r)
	return s
}

// fixRoutes points every route at an existing backend, adding routes now
// and then.
func (s *spec) fixRoutes(r *rand.Rand) {
	names := slices.Sorted(maps.Keys(s.backends))
	for _, h := range genHosts {
		_, has := s.hosts[h]
		if len(names) == 0 {
			delete(s.hosts, h)
			continue
		}
		if _, ok := s.backends[s.hosts[h]]; has && !ok {
			s.hosts[h] = pick(r, names)
		}
		if !has && r.IntN(3) == 0 {
			s.hosts[h] = pick(r, names)
		}
	}
	paths := s.paths[:0]
	for _, p := range s.paths {
		if _, ok := s.backends[p[1]]; ok {
			paths = append(paths, p)
		}
	}
	s.paths = paths
	if len(s.paths) == 0 && len(names) > 0 {
		s.paths = [][2]string{{"/api", pick(r, names)}, {"/", pick(r, names)}}
	}
}

// mutate returns a changed copy of s. Most changes are the kind runtime
// ops can apply; a few force a reload.
func (s *spec) mutate(r *rand.Rand) *spec {
	n := s.clone()
	if r.IntN(25) == 0 {
		n.core++
	}
	if r.IntN(25) == 0 {
		n.profile++
	}
	if r.IntN(4) == 0 {
		name := pick(r, genBackends)
		if _, ok := n.backends[name]; ok {
			delete(n.backends, name)
		} else {
			n.backends[name] = randBackend(r, name)
			n.backends[name].structural = r.IntN(8) == 0
		}
	}
	for _, name := range slices.Sorted(maps.Keys(n.backends)) {
		b := n.backends[name]
		if r.IntN(2) == 0 {
			continue
		}
		if b.structural && r.IntN(6) == 0 {
			b.body++
		}
		for _, sn := range genServers {
			sv, has := b.servers[sn]
			switch x := r.IntN(12); {
			case !has && x == 0:
				b.servers[sn] = randServer(r)
			case has && x == 0:
				delete(b.servers, sn)
			case has && x == 1:
				sv.addr = pick(r, genAddrs)
			case has && x == 2:
				sv.port = pick(r, []int{80, 8080, 9090})
			case has && x == 3:
				sv.weight = pick(r, []int{0, 1, 3, 100})
			case has && x == 4:
				sv.disabled = !sv.disabled
			case has && x == 5 && r.IntN(4) == 0:
				sv.check = !sv.check
			case has && x == 6 && r.IntN(4) == 0:
				sv.keywords = !sv.keywords
			}
			if _, still := b.servers[sn]; still && has {
				b.servers[sn] = sv
			}
		}
	}
	for _, h := range genHosts {
		if r.IntN(5) == 0 {
			delete(n.hosts, h)
		}
	}
	if r.IntN(4) == 0 && len(n.paths) > 1 {
		n.paths[0], n.paths[1] = n.paths[1], n.paths[0]
	}
	for c := range n.certs {
		if r.IntN(4) == 0 {
			n.certs[c]++
		}
	}
	if r.IntN(8) == 0 {
		n.certs["certs/c.pem"] = 0
	}
	if r.IntN(6) == 0 {
		n.general++
	}
	n.fixRoutes(r)
	return n
}

func (s *spec) build() (*renderplan.Output, error) {
	b := renderplan.NewBuilder()
	b.Text(fmt.Sprintf("global\n    # core %d\n\nfrontend fe\n    bind :8080\n    use_backend %%[req.hdr(host),lower,map(maps/hosts.map)]\n\n", s.core))
	if err := b.Profile("web", []string{"mode http", "balance roundrobin", fmt.Sprintf("timeout server %ds", 30+s.profile)}); err != nil {
		return nil, err
	}
	for _, name := range slices.Sorted(maps.Keys(s.backends)) {
		sb := s.backends[name]
		be := renderplan.Backend{Name: name, GUID: sb.guid, Profile: "web"}
		if sb.structural {
			be.Body = []string{fmt.Sprintf("http-response set-header X-Body %d", sb.body)}
		}
		for _, sn := range slices.Sorted(maps.Keys(sb.servers)) {
			sv := sb.servers[sn]
			srv := renderplan.Server{Name: sn, Address: sv.addr, Port: sv.port, Weight: sv.weight, Disabled: sv.disabled, Check: sv.check}
			if sv.keywords {
				srv.Keywords = []string{"maxconn", "100"}
			}
			be.Servers = append(be.Servers, srv)
		}
		if err := b.Backend(be); err != nil {
			return nil, err
		}
	}
	hosts := renderplan.Map{Path: "maps/hosts.map"}
	for _, h := range slices.Sorted(maps.Keys(s.hosts)) {
		hosts.Entries = append(hosts.Entries, renderplan.MapEntry{Key: h, Value: s.hosts[h]})
	}
	if err := b.Map(hosts); err != nil {
		return nil, err
	}
	paths := renderplan.Map{Path: "maps/paths.map", Ordered: true}
	for _, p := range s.paths {
		paths.Entries = append(paths.Entries, renderplan.MapEntry{Key: p[0], Value: p[1]})
	}
	if err := b.Map(paths); err != nil {
		return nil, err
	}
	for _, c := range slices.Sorted(maps.Keys(s.certs)) {
		if err := b.File(c, renderplan.FileCert, fmt.Appendf(nil, "PEM %s v%d\n", c, s.certs[c]), false); err != nil {
			return nil, err
		}
	}
	if err := b.File("general/notes.txt", renderplan.FileGeneral, fmt.Appendf(nil, "v%d\n", s.general), false); err != nil {
		return nil, err
	}
	return b.Build()
}
