package libraries_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/haptic-io/haptic/internal/haproxytest"
	"github.com/haptic-io/haptic/store"

	"github.com/haptic-io/haptic/libraries"
	"github.com/haptic-io/haptic/templating"
)

// stockConfig merges the base and ingress libraries.
func stockConfig(tb testing.TB) *templating.Config {
	tb.Helper()
	cfgs, err := libraries.Load("base", "ingress")
	if err != nil {
		tb.Fatal(err)
	}
	return templating.Merge(cfgs[0], cfgs[1:]...)
}

// storeOf files objs under every alias of cfg watching their apiVersion
// and kind.
func storeOf(tb testing.TB, cfg *templating.Config, objs []map[string]any) *store.Memory {
	tb.Helper()
	st, err := store.NewMemory(cfg.WatchedResources)
	if err != nil {
		tb.Fatal(err)
	}
	addObjects(tb, cfg, st, objs)
	return st
}

// addObjects files objs in store under every alias of cfg watching their
// apiVersion and kind.
func addObjects(tb testing.TB, cfg *templating.Config, st *store.Memory, objs []map[string]any) {
	tb.Helper()
	for _, obj := range objs {
		apiVersion, _ := obj["apiVersion"].(string)
		kind, _ := obj["kind"].(string)
		for alias, wr := range cfg.WatchedResources {
			if wr.APIVersion == apiVersion && wr.Resource == store.ResourceForKind(kind) {
				if err := st.Add(alias, obj); err != nil {
					tb.Fatal(err)
				}
			}
		}
	}
}

type path struct{ path, typ, service string }

type rule struct {
	host  string
	paths []path
}

// routeFixture builds Ingresses in namespace "t" whose Services are echo
// servers named after the Service.
type routeFixture struct {
	t       *testing.T
	objs    []map[string]any
	started map[string]bool
}

func newRouteFixture(t *testing.T) *routeFixture {
	return &routeFixture{t: t, started: map[string]bool{}}
}

// service starts an echo server and adds its Service and EndpointSlice.
func (r *routeFixture) service(name string) {
	if r.started[name] {
		return
	}
	r.started[name] = true
	echo := haproxytest.StartEcho(r.t, name)
	r.objs = append(r.objs,
		map[string]any{
			"apiVersion": "v1", "kind": "Service",
			"metadata": map[string]any{"namespace": "t", "name": name},
			"spec":     map[string]any{"ports": []any{map[string]any{"port": int64(80), "targetPort": int64(echo.Port)}}},
		},
		map[string]any{
			"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
			"metadata":    map[string]any{"namespace": "t", "name": name + "-1", "labels": map[string]any{"kubernetes.io/service-name": name}},
			"addressType": "IPv4",
			"ports":       []any{map[string]any{"port": int64(echo.Port)}},
			"endpoints": []any{map[string]any{
				"addresses":  []any{"127.0.0.1"},
				"conditions": map[string]any{"ready": true},
				"targetRef":  map[string]any{"kind": "Pod", "namespace": "t", "name": name + "-pod"},
			}},
		})
}

func (r *routeFixture) backendRef(svc string) map[string]any {
	r.service(svc)
	return map[string]any{"service": map[string]any{"name": svc, "port": map[string]any{"number": int64(80)}}}
}

func (r *routeFixture) ingress(name, created, defaultSvc string, rules []rule) {
	spec := map[string]any{"ingressClassName": "haptic"}
	if defaultSvc != "" {
		spec["defaultBackend"] = r.backendRef(defaultSvc)
	}
	var rs []any
	for _, ru := range rules {
		var ps []any
		for _, p := range ru.paths {
			ps = append(ps, map[string]any{"path": p.path, "pathType": p.typ, "backend": r.backendRef(p.service)})
		}
		m := map[string]any{"http": map[string]any{"paths": ps}}
		if ru.host != "" {
			m["host"] = ru.host
		}
		rs = append(rs, m)
	}
	spec["rules"] = rs
	r.objs = append(r.objs, map[string]any{
		"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
		"metadata": map[string]any{"namespace": "t", "name": name, "creationTimestamp": created},
		"spec":     spec,
	})
}

// start renders the objects (HTTP on a free port, no HTTPS, the library's
// stats socket renamed so it does not clash with haproxytest's) and starts
// HAProxy series on the tree. It returns the frontend's base URL and the
// instance.
func (r *routeFixture) start(t *testing.T, series string) (string, *haproxytest.Instance) {
	return r.startWith(t, series, map[string]any{"httpsPort": 0})
}

// startWith is start with further extraContext overrides.
func (r *routeFixture) startWith(t *testing.T, series string, overrides map[string]any) (string, *haproxytest.Instance) {
	t.Helper()
	cfg := stockConfig(t)
	st := storeOf(t, cfg, r.objs)
	engine, err := templating.Compile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	port := haproxytest.FreePort(t)
	extra := map[string]any{
		"httpPort": port, "statsPort": haproxytest.FreePort(t), "statsSocket": "lib-stats.sock",
	}
	for k, v := range overrides {
		extra[k] = v
	}
	out, problems, err := engine.Render(context.Background(), st.Snapshot(), templating.RenderOptions{ExtraContext: extra})
	if err != nil {
		t.Fatal(err)
	}
	if len(problems) > 0 {
		t.Fatalf("problems: %v", problems)
	}
	files := map[string]string{}
	var cfgText string
	for _, f := range out.Files {
		if f.Path == "haproxy.cfg" {
			cfgText = string(f.Body)
			continue
		}
		files[f.Path] = string(f.Body)
	}
	inst := haproxytest.Start(t, series, haproxytest.Options{
		Config: func(string) string { return cfgText },
		Files:  files,
	})
	return fmt.Sprintf("http://127.0.0.1:%d", port), inst
}

// profileOf returns the profile (from <profile>) of backend name in cfg.
func profileOf(t *testing.T, cfg, name string) string {
	t.Helper()
	for _, l := range strings.Split(cfg, "\n") {
		f := strings.Fields(l)
		if len(f) == 4 && f[0] == "backend" && f[1] == name && f[2] == "from" {
			return f[3]
		}
	}
	t.Fatalf("backend %s not in haproxy.cfg", name)
	return ""
}

// lastLine is the last non-empty line of a runtime API reply.
func lastLine(reply string) string {
	lines := strings.Split(strings.TrimSpace(reply), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}
