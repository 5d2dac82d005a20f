package agent

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/haptic-io/haptic/agentapi"
	"github.com/haptic-io/haptic/deployplan"
	"github.com/haptic-io/haptic/haproxysock"
	"github.com/haptic-io/haptic/internal/haproxytest"
	"github.com/haptic-io/haptic/renderplan"
)

// world is what a differential scenario renders: routes (one dynamic
// backend each, selected through the host map), an ordered path map and a
// TLS certificate in a crt-list.
type world struct {
	routes []route
	// hosts are extra host-map entries (host → backend) beyond one per
	// route.
	hosts map[string]string
	paths [][2]string
	cert  int // version of the certificate's PEM
}

type route struct {
	host, backend string
	servers       []renderplan.Server
}

func srv(name, addr string, port int) renderplan.Server {
	return renderplan.Server{Name: name, Address: addr, Port: port, Weight: renderplan.DefaultWeight}
}

func (w world) clone() world {
	c := w
	c.routes = nil
	for _, r := range w.routes {
		r.servers = slices.Clone(r.servers)
		c.routes = append(c.routes, r)
	}
	c.hosts = map[string]string{}
	for k, v := range w.hosts {
		c.hosts[k] = v
	}
	c.paths = slices.Clone(w.paths)
	return c
}

// build renders w with the frontends on the given ports. Certificates are
// generated once per version and test.
func (w world) build(t *testing.T, httpPort, tlsPort int, certs map[int][]byte) *renderplan.Output {
	t.Helper()
	b := renderplan.NewBuilder()
	b.Text(fmt.Sprintf(`defaults base
    mode http
    timeout connect 5s
    timeout client 30s
    timeout server 30s

frontend fe_main from base
    bind 127.0.0.1:%d
    bind 127.0.0.1:%d ssl crt-list certs/list.txt
    use_backend %%[path,map_beg(maps/paths.map)] if { path,map_beg(maps/paths.map) -m found }
    use_backend %%[req.hdr(host),host_only,lower,map(maps/hosts.map)]
    default_backend be_default

backend be_default from base
    http-request return status 404

`, httpPort, tlsPort))
	if err := b.Profile("web", []string{"mode http", "balance roundrobin", "timeout connect 5s", "timeout server 30s"}); err != nil {
		t.Fatal(err)
	}
	hosts := renderplan.Map{Path: "maps/hosts.map"}
	for _, r := range w.routes {
		if err := b.Backend(renderplan.Backend{Name: r.backend, GUID: "g-" + r.backend, Profile: "web", Servers: r.servers}); err != nil {
			t.Fatal(err)
		}
		hosts.Entries = append(hosts.Entries, renderplan.MapEntry{Key: r.host, Value: r.backend})
	}
	for k, v := range w.hosts {
		hosts.Entries = append(hosts.Entries, renderplan.MapEntry{Key: k, Value: v})
	}
	paths := renderplan.Map{Path: "maps/paths.map", Ordered: true}
	for _, p := range w.paths {
		paths.Entries = append(paths.Entries, renderplan.MapEntry{Key: p[0], Value: p[1]})
	}
	for _, m := range []renderplan.Map{hosts, paths} {
		if err := b.Map(m); err != nil {
			t.Fatal(err)
		}
	}
	if certs[w.cert] == nil {
		certs[w.cert] = selfSigned(t, fmt.Sprintf("api-v%d.example.com", w.cert))
	}
	if err := b.File("certs/api.pem", renderplan.FileCert, certs[w.cert], false); err != nil {
		t.Fatal(err)
	}
	if err := b.File("certs/list.txt", renderplan.FileCrtList, []byte("certs/api.pem\n"), false); err != nil {
		t.Fatal(err)
	}
	out, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func selfSigned(t *testing.T, cn string) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial, err := rand.Int(rand.Reader, big.NewInt(1<<62))
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: serial, Subject: pkix.Name{CommonName: cn}, DNSNames: []string{cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return append(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder})...)
}

// startOn starts HAProxy on out's files: haproxy.cfg after the harness's
// global section, every other file at its path.
func startOn(t *testing.T, series string, out *renderplan.Output) *haproxytest.Instance {
	t.Helper()
	files := map[string]string{}
	var cfg string
	for _, f := range out.Files {
		if f.Path == renderplan.ConfigPath {
			cfg = string(f.Body)
			continue
		}
		files[f.Path] = string(f.Body)
	}
	return haproxytest.Start(t, series, haproxytest.Options{Config: func(string) string { return cfg }, Files: files})
}

// runtimeState is what the comparison reads from a running HAProxy.
type runtimeState struct {
	Backends []string            // show backend, sorted
	Servers  []string            // show servers state: backend/server addr:port weight admin
	Maps     map[string][]string // show map, "key value" (host map sorted)
	Certs    map[string][]string // show ssl cert <file>: serial, subject, fingerprint
	Unpub    []string            // backends show stat marks UNPUB (3.4)
}

func readState(t *testing.T, inst *haproxytest.Instance, p *renderplan.Plan) runtimeState {
	t.Helper()
	var st runtimeState
	for _, l := range strings.Split(inst.Cmd(t, "show backend"), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			st.Backends = append(st.Backends, l)
		}
	}
	slices.Sort(st.Backends)
	for _, l := range strings.Split(inst.Cmd(t, "show servers state"), "\n") {
		f := strings.Fields(l)
		if len(f) < 19 || strings.HasPrefix(l, "#") {
			continue
		}
		// be_name srv_name srv_addr srv_port srv_uweight, admin state as
		// maint/drain/ready. srv_iweight is left out: "set server … weight"
		// changes the current weight, a reload the initial one too.
		st.Servers = append(st.Servers, fmt.Sprintf("%s/%s %s:%s weight %s %s", f[1], f[3], f[4], f[18], f[7], adminState(f[6])))
	}
	slices.Sort(st.Servers)
	st.Maps = map[string][]string{}
	for _, m := range p.Maps {
		var entries []string
		for _, l := range strings.Split(inst.Cmd(t, "show map "+m.Path), "\n") {
			f := strings.SplitN(strings.TrimSpace(l), " ", 2) // drop the entry's pointer
			if len(f) == 2 && strings.HasPrefix(f[0], "0x") {
				entries = append(entries, f[1])
			}
		}
		if !m.Ordered {
			slices.Sort(entries)
		}
		st.Maps[m.Path] = entries
	}
	st.Certs = map[string][]string{}
	for _, f := range p.Files {
		if f.Kind != renderplan.FileCert {
			continue
		}
		for _, l := range strings.Split(inst.Cmd(t, "show ssl cert "+f.Path), "\n") {
			for _, key := range []string{"Serial:", "Subject:", "SHA1 FingerPrint:"} {
				if strings.HasPrefix(l, key) {
					st.Certs[f.Path] = append(st.Certs[f.Path], strings.TrimSpace(l))
				}
			}
		}
		if len(st.Certs[f.Path]) == 0 {
			t.Fatalf("show ssl cert %s: no serial or subject", f.Path)
		}
	}
	for _, l := range strings.Split(inst.Cmd(t, "show stat"), "\n") {
		f := strings.Split(l, ",")
		if len(f) > 17 && f[1] == "BACKEND" && strings.Contains(f[17], "UNPUB") {
			st.Unpub = append(st.Unpub, f[0])
		}
	}
	slices.Sort(st.Unpub)
	return st
}

// adminState reduces srv_admin_state to what traffic sees: any maint flag
// (forced, inherited, configured) is maint; then drain; else ready.
func adminState(s string) string {
	var v int
	if _, err := fmt.Sscan(s, &v); err != nil {
		return "admin=" + s
	}
	switch {
	case v&0x07 != 0 || v&0x20 != 0:
		return "maint"
	case v&0x18 != 0:
		return "drain"
	}
	return "ready"
}

type diffScenario struct {
	name       string
	base, next world
	// runtime lists the series on which the change must be runtime; on
	// the others it must reload.
	runtime []string
}

func differentialScenarios() []diffScenario {
	api := route{"api.example.com", "be_api", []renderplan.Server{srv("api-a", "127.0.0.11", 19001), srv("api-b", "127.0.0.12", 19001)}}
	web := route{"www.example.com", "be_web", []renderplan.Server{srv("web-a", "127.0.0.21", 19002)}}
	shop := route{"shop.example.com", "be_shop", []renderplan.Server{srv("shop-a", "127.0.0.31", 19003), srv("shop-b", "127.0.0.32", 19003)}}
	base := world{routes: []route{api, web}, hosts: map[string]string{"api.internal": "be_api"},
		paths: [][2]string{{"/static", "be_web"}, {"/", "be_api"}}, cert: 1}
	both, only34 := []string{"3.0", "3.2", "3.4"}, []string{"3.4"}

	var s []diffScenario
	add := func(name string, runtime []string, change func(w *world)) {
		next := base.clone()
		change(&next)
		s = append(s, diffScenario{name: name, base: base, next: next, runtime: runtime})
	}
	add("route add", only34, func(w *world) { w.routes = append(w.routes, shop) })
	add("route remove", only34, func(w *world) { w.routes = w.routes[:1]; w.paths = w.paths[1:] })
	add("endpoint churn", both, func(w *world) {
		w.routes[0].servers = []renderplan.Server{srv("api-a", "127.0.0.11", 19001), srv("api-c", "127.0.0.13", 19001)}
	})
	add("weight change", both, func(w *world) { w.routes[0].servers[1].Weight = 50 })
	add("weight zero", both, func(w *world) { w.routes[1].servers[0].Weight = 0 })
	add("server moved and another disabled", both, func(w *world) {
		w.routes[0].servers[0].Address, w.routes[0].servers[0].Port = "127.0.0.14", 19009
		w.routes[0].servers[1].Disabled = true
	})
	add("new server added disabled with weight 0", both, func(w *world) {
		s := srv("api-z", "::1", 19005)
		s.Disabled, s.Weight = true, 0
		w.routes[0].servers = append(w.routes[0].servers, s)
	})
	add("map reorder", both, func(w *world) { w.paths[0], w.paths[1] = w.paths[1], w.paths[0] })
	add("host map entries", both, func(w *world) {
		w.hosts = map[string]string{"web.internal": "be_web", "api.example.com": "be_web"}
		w.routes[0].host = "api2.example.com"
	})
	add("large host map change", both, func(w *world) {
		for i := range 150 {
			w.hosts[fmt.Sprintf("h%03d.example.com", i)] = "be_web"
		}
	})
	add("cert rotation", both, func(w *world) { w.cert = 2 })
	add("backend rename", only34, func(w *world) {
		w.routes[1].backend = "be_web2"
		w.paths[0][1] = "be_web2"
	})
	return s
}

// TestRuntimeOpsMatchAFreshHAProxy is the differential proof on real
// HAProxy 3.0, 3.2 and 3.4: start on plan A's files, apply Diff(A→B)'s ops
// through haproxysock, and compare the backends, servers, maps and
// certificates with a fresh HAProxy started on B's files.
func TestRuntimeOpsMatchAFreshHAProxy(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real HAProxy processes; skipped with -short")
	}
	haproxytest.ForEachSeries(t, func(t *testing.T, series string) {
		for _, sc := range differentialScenarios() {
			t.Run(sc.name, func(t *testing.T) {
				certs := map[int][]byte{}
				httpA, tlsA := haproxytest.FreePort(t), haproxytest.FreePort(t)
				a := sc.base.build(t, httpA, tlsA, certs)
				b := sc.next.build(t, httpA, tlsA, certs)
				inst := startOn(t, series, a)
				d := deployplan.Diff(b.Plan, deployplan.Baseline{Plan: a.Plan, HAProxyVersion: inst.Version, AgentOps: agentapi.OpKinds()})
				wantRuntime := slices.Contains(sc.runtime, series)
				switch {
				case wantRuntime && d.Verdict != deployplan.VerdictRuntime:
					t.Fatalf("verdict %s, want runtime:\n%s", d.Verdict, d)
				case !wantRuntime && d.Verdict != deployplan.VerdictReload:
					t.Fatalf("verdict %s, want reload:\n%s", d.Verdict, d)
				case !wantRuntime:
					return // a reload reproduces B by construction
				}
				applyDecision(t, inst, b, d)

				httpB, tlsB := haproxytest.FreePort(t), haproxytest.FreePort(t)
				fresh := startOn(t, series, sc.next.build(t, httpB, tlsB, certs))
				want := readState(t, fresh, b.Plan)
				got := readState(t, inst, b.Plan)
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("runtime ops differ from a fresh HAProxy on the new files (-fresh +runtime):\n%s\ndecision:\n%s", diff, d)
				}
			})
		}
	})
}

// applyDecision does what the agent does for a runtime verdict: write the
// files, then run the ops in order on one stats socket session.
func applyDecision(t *testing.T, inst *haproxytest.Instance, out *renderplan.Output, d deployplan.Decision) {
	t.Helper()
	bodies := map[string][]byte{}
	for _, f := range out.Files {
		bodies[f.Path] = f.Body
		if f.Path != renderplan.ConfigPath {
			inst.WriteFile(t, f.Path, string(f.Body))
		}
	}
	env := CommandEnv{
		ReadFile: func(p string) ([]byte, error) {
			b, ok := bodies[p]
			if !ok {
				return nil, fmt.Errorf("no file %s in the apply", p)
			}
			return b, nil
		},
		RemovableWait: 2 * time.Second,
	}
	// One session for all ops, as the agent runs them: waits, map
	// replaces (two batches) and certificate payloads share it.
	c := &haproxysock.Client{Path: inst.StatsSocket, Timeout: 5 * time.Second}
	sess := c.Session()
	defer func() { _ = sess.Close() }()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i, op := range d.Ops {
		if _, err := RunOp(ctx, sess, op, env); err != nil {
			t.Fatalf("op %d %v: %v\ndecision:\n%s", i, op, err, d)
		}
	}
}
