package templating_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/haptic-io/haptic/renderplan"
	"github.com/haptic-io/haptic/store"
	"github.com/haptic-io/haptic/templating"
)

func serversOf(t *testing.T, out *renderplan.Output, be string) []renderplan.Server {
	t.Helper()
	b, ok := out.Plan.Backend(be)
	if !ok {
		t.Fatalf("backend %s not in plan", be)
	}
	return b.Servers
}

const serversTmpl = preamble + `{{ backend (dict "name" "be" "servers" (backendServers (dict "namespace" "ns" "service" "web" "port" %s))) }}
`

func TestBackendServersResolvesReadyEndpointsByPort(t *testing.T) {
	objs := []map[string]any{
		service("ns", "web", svcPort("http", 80), svcPort("admin", 9000)),
		slice("ns", "web-b", "web", map[string]int64{"http": 8080, "admin": 9090},
			endpoint{addr: "10.0.0.3", pod: "web-3"},               // ready absent: ready
			endpoint{addr: "10.0.0.4", pod: "web-4", ready: false}, // not ready
			endpoint{addr: "10.0.0.1", pod: "web-1", ready: true}),
		slice("ns", "web-a", "web", map[string]int64{"http": 8080, "admin": 9090},
			endpoint{addr: "10.0.0.1", pod: "web-1", ready: true}, // same pod in two slices
			endpoint{addr: "198.18.0.3"}),                         // no targetRef
		slice("other", "web-x", "web", map[string]int64{"http": 1},
			endpoint{addr: "10.9.9.9", pod: "elsewhere"}),
	}
	want := func(port int) []renderplan.Server {
		return []renderplan.Server{
			{Name: "ep-198-18-0-3", Address: "198.18.0.3", Port: port, Weight: 1},
			{Name: "web-1", Address: "10.0.0.1", Port: port, Weight: 1},
			{Name: "web-3", Address: "10.0.0.3", Port: port, Weight: 1},
		}
	}
	for _, c := range []struct {
		name, port string
		want       int
	}{
		{"by name", `"http"`, 8080},
		{"by number", `80`, 8080},
		{"by number as string", `"9000"`, 9090},
		{"second port by name", `"admin"`, 9090},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, problems := renderTemplate(t, sprintf(serversTmpl, c.port), objs...)
			if len(problems) > 0 {
				t.Fatalf("problems: %v", problems)
			}
			if diff := cmp.Diff(want(c.want), serversOf(t, out, "be")); diff != "" {
				t.Errorf("servers (-want +got):\n%s", diff)
			}
		})
	}
}

func TestBackendServersWorksWithoutAServiceNameIndex(t *testing.T) {
	cfg := configWith(t, sprintf(serversTmpl, `"http"`), "")
	wr := cfg.WatchedResources["endpoints"]
	wr.IndexBy = []string{"metadata.namespace", "metadata.name"}
	cfg.WatchedResources["endpoints"] = wr
	out, problems, err := renderConfig(t, cfg,
		service("ns", "web", svcPort("http", 80)),
		slice("ns", "web-a", "web", map[string]int64{"http": 8080}, endpoint{addr: "10.0.0.1", pod: "p"}))
	if err != nil || len(problems) > 0 {
		t.Fatalf("render: %v %v", err, problems)
	}
	want := []renderplan.Server{{Name: "p", Address: "10.0.0.1", Port: 8080, Weight: 1}}
	if diff := cmp.Diff(want, serversOf(t, out, "be")); diff != "" {
		t.Errorf("servers (-want +got):\n%s", diff)
	}
}

func TestBackendServersNamesAreLegalAndUnique(t *testing.T) {
	out, _ := renderTemplate(t, sprintf(serversTmpl, `"http"`),
		service("ns", "web", svcPort("http", 80)),
		slice("ns", "web-a", "web", map[string]int64{"http": 8080},
			endpoint{addr: "10.0.0.1", pod: "pod;evil name"},
			endpoint{addr: "2001:db8::1", pod: "dual"},
			endpoint{addr: "10.0.0.2", pod: "dual"},
			endpoint{addr: "not-an-ip", pod: "bad"}))
	want := []renderplan.Server{
		{Name: "dual", Address: "10.0.0.2", Port: 8080, Weight: 1},
		{Name: "dual-2001-db8--1-8080", Address: "2001:db8::1", Port: 8080, Weight: 1},
		{Name: "pod_evil_name", Address: "10.0.0.1", Port: 8080, Weight: 1},
	}
	if diff := cmp.Diff(want, serversOf(t, out, "be")); diff != "" {
		t.Errorf("servers (-want +got):\n%s", diff)
	}
}

func TestBackendServersReportsMissingServicesAndPorts(t *testing.T) {
	// A problem about an object of the store carries its identity.
	webRef := templating.ObjectRef{APIVersion: "v1", Kind: "Service", Namespace: "ns", Name: "web"}
	cases := []struct {
		name string
		tmpl string
		objs []map[string]any
		want templating.Problem
	}{
		{"no service", `(dict "namespace" "ns" "service" "web" "port" 80 "object" "Ingress ns/i")`, nil,
			templating.Problem{Object: "Ingress ns/i", Reason: templating.ReasonServiceNotFound, Message: "service ns/web not found"}},
		{"no port", `(dict "namespace" "ns" "service" "web" "port" "grpc")`, []map[string]any{service("ns", "web", svcPort("http", 80))},
			templating.Problem{Object: "Service ns/web", Ref: webRef, Reason: templating.ReasonServicePortNotFound, Message: "service ns/web has no port grpc"}},
		{"external name", `(dict "namespace" "ns" "service" "web" "port" 80)`, []map[string]any{{
			"apiVersion": "v1", "kind": "Service", "metadata": map[string]any{"namespace": "ns", "name": "web"},
			"spec": map[string]any{"type": "ExternalName", "externalName": "example.com"}}},
			templating.Problem{Object: "Service ns/web", Ref: webRef, Reason: templating.ReasonServiceUnsupported, Message: "service ns/web is of type ExternalName"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, problems := renderTemplate(t, preamble+`{{ backend (dict "name" "be" "servers" (backendServers `+c.tmpl+`)) }}
`, c.objs...)
			if diff := cmp.Diff([]templating.Problem{c.want}, problems); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
			if s := serversOf(t, out, "be"); len(s) != 0 {
				t.Errorf("servers = %v, want none", s)
			}
		})
	}
}

func TestBackendServersMisuseIsARenderError(t *testing.T) {
	for name, c := range map[string]struct{ tmpl, want string }{
		"unknown key":  {`{{ backendServers (dict "namespace" "ns" "service" "web" "port" 80 "proto" "tcp") }}`, "unknown key(s) proto"},
		"missing port": {`{{ backendServers (dict "namespace" "ns" "service" "web") }}`, "port: is required"},
		"bad port":     {`{{ backendServers (dict "namespace" "ns" "service" "web" "port" (list 1)) }}`, "must be a port name or number"},
	} {
		t.Run(name, func(t *testing.T) {
			if got := renderError(t, c.tmpl); !contains(got, c.want) {
				t.Errorf("error %q does not contain %q", got, c.want)
			}
		})
	}
}

func TestBackendServiceKeyResolvesLikeBackendServers(t *testing.T) {
	objs := []map[string]any{
		service("ns", "web", svcPort("http", 80)),
		slice("ns", "web-a", "web", map[string]int64{"http": 8080},
			endpoint{addr: "10.0.0.2", pod: "b"}, endpoint{addr: "10.0.0.1", pod: "a"}),
	}
	out, problems := renderTemplate(t, preamble+`{{ backend (dict "name" "via_dicts" "servers" (backendServers (dict "namespace" "ns" "service" "web" "port" "http"))) }}
{{ backend (dict "name" "via_key" "service" (dict "namespace" "ns" "service" "web" "port" "http")) }}
{{ backend (dict "name" "both" "servers" (list (dict "name" "static" "address" "10.9.9.9" "port" 1)) "service" (dict "namespace" "ns" "service" "web" "port" 80)) }}
{{ backend (dict "name" "missing" "object" "Ingress ns/i" "service" (dict "namespace" "ns" "service" "nope" "port" 80)) }}
`, objs...)
	if diff := cmp.Diff(serversOf(t, out, "via_dicts"), serversOf(t, out, "via_key")); diff != "" {
		t.Errorf("service key differs from backendServers (-dicts +key):\n%s", diff)
	}
	if got := len(serversOf(t, out, "both")); got != 3 {
		t.Errorf("servers + service gave %d servers, want 3", got)
	}
	want := []templating.Problem{{Object: "Ingress ns/i", Reason: templating.ReasonServiceNotFound, Message: "service ns/nope not found"}}
	if diff := cmp.Diff(want, problems); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
	if got := renderError(t, `{{ backend (dict "name" "x" "service" (dict "namespace" "ns" "svc" "web" "port" 80)) }}`); !contains(got, "unknown key(s) svc") {
		t.Errorf("error %q lacks the unknown key", got)
	}
}

func TestBackendServersNeedsWatchedServicesAndSlices(t *testing.T) {
	cfg, err := templating.ParseConfig([]byte(`haproxyConfig: {template: '{{ backendServers (dict "service" "x" "port" 1) }}'}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := renderConfig(t, cfg); err == nil || !contains(err.Error(), "must watch services") {
		t.Fatalf("error %v", err)
	}
}

// An engine reuses a resolution while the store returns the same objects:
// the next render must still see every change, and replay the problems.
func TestBackendServersFollowChangesAcrossRenders(t *testing.T) {
	cfg := configWith(t, preamble+`{{ backend (dict "name" "be" "servers" (backendServers (dict "namespace" "ns" "service" "web" "port" "http"))) }}
{{ backend (dict "name" "gone" "servers" (backendServers (dict "namespace" "ns" "service" "nosuch" "port" "http"))) }}
`, "")
	e, err := templating.Compile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.NewMemory(cfg.WatchedResources)
	if err != nil {
		t.Fatal(err)
	}
	add := func(objs ...map[string]any) {
		t.Helper()
		if _, err := st.AddObjects(objs...); err != nil {
			t.Fatal(err)
		}
	}
	render := func() ([]renderplan.Server, []templating.Problem) {
		t.Helper()
		out, problems, err := e.Render(context.Background(), st.Snapshot(), templating.RenderOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return serversOf(t, out, "be"), problems
	}
	add(service("ns", "web", svcPort("http", 80)),
		slice("ns", "web-a", "web", map[string]int64{"http": 8080}, endpoint{addr: "10.0.0.1", pod: "a"}))
	one := []renderplan.Server{{Name: "a", Address: "10.0.0.1", Port: 8080, Weight: 1}}
	for i := range 2 { // the second render reuses the first's resolution
		servers, problems := render()
		if diff := cmp.Diff(one, servers); diff != "" {
			t.Errorf("render %d: servers (-want +got):\n%s", i, diff)
		}
		if len(problems) != 1 || problems[0].Reason != templating.ReasonServiceNotFound {
			t.Errorf("render %d: problems = %v, want the missing service", i, problems)
		}
	}
	add(slice("ns", "web-a", "web", map[string]int64{"http": 8080}, endpoint{addr: "10.0.0.2", pod: "b"}))
	servers, _ := render()
	if diff := cmp.Diff([]renderplan.Server{{Name: "b", Address: "10.0.0.2", Port: 8080, Weight: 1}}, servers); diff != "" {
		t.Errorf("after a slice change: servers (-want +got):\n%s", diff)
	}
	add(service("ns", "web", svcPort("http", 80), svcPort("x", 81)),
		slice("ns", "web-b", "web", map[string]int64{"http": 8080}, endpoint{addr: "10.0.0.1", pod: "a"}))
	servers, _ = render()
	if len(servers) != 2 {
		t.Errorf("after a new slice: servers = %v, want a and b", servers)
	}
}
