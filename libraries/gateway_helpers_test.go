package libraries_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/haptic-io/haptic/gatewayapi"
	"github.com/haptic-io/haptic/internal/haproxytest"
	"github.com/haptic-io/haptic/libraries"
	"github.com/haptic-io/haptic/renderplan"
	"github.com/haptic-io/haptic/store"
	"github.com/haptic-io/haptic/templating"
)

// gatewayConfig merges the base and gateway libraries.
func gatewayConfig(tb testing.TB) *templating.Config {
	tb.Helper()
	cfgs, err := libraries.Load("base", "gateway")
	if err != nil {
		tb.Fatal(err)
	}
	return templating.Merge(cfgs[0], cfgs[1:]...)
}

// gatewayClass is the class every gateway test uses.
const gatewayClass = `
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: haptic}
spec: {controllerName: haproxy-haptic.org/gateway-controller}
---
apiVersion: v1
kind: Namespace
metadata: {name: t}
`

// gatewayFixture holds the objects of one Gateway test; Services named
// in backendRefs are started as reflecting echo servers.
type gatewayFixture struct {
	t       *testing.T
	objs    []map[string]any
	started map[string]bool
}

func newGatewayFixture(t *testing.T, manifests string) *gatewayFixture {
	t.Helper()
	f := &gatewayFixture{t: t, started: map[string]bool{}}
	f.add(gatewayClass + "\n---\n" + manifests)
	return f
}

// add decodes manifests into the fixture.
func (f *gatewayFixture) add(manifests string) {
	f.t.Helper()
	objs, err := store.DecodeManifests([]byte(manifests))
	if err != nil {
		f.t.Fatal(err)
	}
	f.objs = append(f.objs, objs...)
}

// services starts a reflecting echo per name, with a Service (port 8080)
// and an EndpointSlice in namespace t. n > 1 starts that many endpoints.
func (f *gatewayFixture) services(n int, names ...string) {
	for _, name := range names {
		if f.started[name] {
			continue
		}
		f.started[name] = true
		var eps []any
		port := 0
		for i := range n {
			e := startReflector(f.t, name)
			port = e.port
			eps = append(eps, map[string]any{
				"addresses":  []any{"127.0.0.1"},
				"conditions": map[string]any{"ready": true},
				"targetRef":  map[string]any{"kind": "Pod", "namespace": "t", "name": fmt.Sprintf("%s-%d", name, i)},
			})
			if n > 1 {
				// One slice per endpoint: each has its own port.
				f.objs = append(f.objs, endpointSlice(name, fmt.Sprintf("%s-%d", name, i), e.port, eps[len(eps)-1:]))
			}
		}
		f.objs = append(f.objs, map[string]any{
			"apiVersion": "v1", "kind": "Service",
			"metadata": map[string]any{"namespace": "t", "name": name},
			"spec":     map[string]any{"ports": []any{map[string]any{"name": "http", "port": int64(8080)}}},
		})
		if n == 1 {
			f.objs = append(f.objs, endpointSlice(name, name+"-1", port, eps))
		}
	}
}

func endpointSlice(svc, name string, port int, eps []any) map[string]any {
	return map[string]any{
		"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
		"metadata":    map[string]any{"namespace": "t", "name": name, "labels": map[string]any{"kubernetes.io/service-name": svc}},
		"addressType": "IPv4",
		"ports":       []any{map[string]any{"name": "http", "port": int64(port)}},
		"endpoints":   eps,
	}
}

// render builds the model of Gateway t/gw and renders it with the given
// port offset.
func (f *gatewayFixture) render(offset int) (*renderplan.Output, *gatewayapi.Model) {
	f.t.Helper()
	return f.renderWith(offset, nil)
}

// renderWith is render with further extraContext overrides.
func (f *gatewayFixture) renderWith(offset int, overrides map[string]any) (*renderplan.Output, *gatewayapi.Model) {
	f.t.Helper()
	cfg := gatewayConfig(f.t)
	st := storeOf(f.t, cfg, f.objs)
	model := gatewayapi.Build(st.Snapshot(), gatewayapi.Options{})
	ctx := model.RenderContext(gatewayapi.Ref{Namespace: "t", Name: "gw"})
	if ctx == nil {
		f.t.Fatalf("Gateway t/gw is not served: %v", model.Statuses(nil))
	}
	engine, err := templating.Compile(cfg)
	if err != nil {
		f.t.Fatal(err)
	}
	extra := map[string]any{
		"gateway": ctx, "listenerPortOffset": int64(offset),
		"statsPort": int64(haproxytest.FreePort(f.t)), "statsSocket": "lib-stats.sock",
	}
	for k, v := range overrides {
		extra[k] = v
	}
	out, problems, err := engine.Render(context.Background(), st.Snapshot(), templating.RenderOptions{ExtraContext: extra})
	if err != nil {
		f.t.Fatal(err)
	}
	if len(problems) > 0 {
		f.t.Fatalf("problems: %v", problems)
	}
	return out, model
}

// start renders and starts HAProxy series on the output; listener port p
// is served at 127.0.0.1:p+offset.
func (f *gatewayFixture) start(series string, ports ...int) (int, *haproxytest.Instance, *renderplan.Output) {
	f.t.Helper()
	offset := freeOffset(f.t, ports...)
	out, _ := f.render(offset)
	inst := startOutput(f.t, series, out)
	return offset, inst, out
}

func startOutput(t *testing.T, series string, out *renderplan.Output) *haproxytest.Instance {
	t.Helper()
	files := map[string]string{}
	var cfgText string
	for _, fl := range out.Files {
		if fl.Path == "haproxy.cfg" {
			cfgText = string(fl.Body)
			continue
		}
		files[fl.Path] = string(fl.Body)
	}
	return haproxytest.Start(t, series, haproxytest.Options{
		Config: func(string) string { return cfgText },
		Files:  files,
	})
}

// freeOffset returns an offset at which every listener port is free on
// 127.0.0.1.
func freeOffset(t testing.TB, ports ...int) int {
	t.Helper()
	for range 100 {
		off := 20000 + rand.IntN(8000)
		ok := true
		for _, p := range ports {
			l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p+off))
			if err != nil {
				ok = false
				break
			}
			_ = l.Close()
		}
		if ok {
			return off
		}
	}
	t.Fatal("no free port offset")
	return 0
}

// reflector is an HTTP server that answers with what it received.
type reflector struct{ port int }

// reflection is a reflector's answer body.
type reflection struct {
	Name    string              `json:"name"`
	Method  string              `json:"method"`
	Path    string              `json:"path"`
	Query   string              `json:"query"`
	Host    string              `json:"host"`
	Proto   string              `json:"proto"`
	Headers map[string][]string `json:"headers"`
}

func startReflector(t *testing.T, name string) *reflector {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			w.Header().Set("X-Echo", name)
			if failing(w, r) {
				return
			}
			w.Header().Set("X-Upstream", "set-by-upstream")
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(reflection{Name: name, Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Host: r.Host, Proto: r.Proto, Headers: r.Header})
		}),
		ReadHeaderTimeout: 5 * time.Second,
	}
	// gRPC backends speak HTTP/2 in clear text (prior knowledge).
	srv.Protocols = new(http.Protocols)
	srv.Protocols.SetHTTP1(true)
	srv.Protocols.SetUnencryptedHTTP2(true)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(l)
	}()
	t.Cleanup(func() {
		_ = srv.Close()
		<-done
	})
	return &reflector{port: l.Addr().(*net.TCPAddr).Port}
}

// failures counts the requests of each retry simulation id, across
// every reflector (retries may go to another server).
var failures = struct {
	sync.Mutex
	seen map[string]int
}{seen: map[string]int{}}

// failing answers a request of a retry simulation: with the query
// parameters code=<status>, after=<n> and id=<unique>, the first n
// requests of that id get the status, the next ones go on normally.
func failing(w http.ResponseWriter, r *http.Request) bool {
	q := r.URL.Query()
	id, code, after := q.Get("id"), q.Get("code"), q.Get("after")
	if id == "" || code == "" {
		return false
	}
	failures.Lock()
	failures.seen[id]++
	n := failures.seen[id]
	failures.Unlock()
	c, _ := strconv.Atoi(code)
	a, _ := strconv.Atoi(after)
	if n > a || c < 100 {
		return false
	}
	w.WriteHeader(c)
	return true
}

// request is one request of a traffic test.
type request struct {
	method, host, path string
	port               int // listener port
	headers            map[string]string
}

// answer is what came back.
type answer struct {
	status   int
	backend  string // X-Echo
	got      reflection
	header   http.Header
	location string
}

// do sends req to the listener port (plus offset) without following
// redirects.
func do(t *testing.T, offset int, req request) answer {
	t.Helper()
	method := req.method
	if method == "" {
		method = http.MethodGet
	}
	port := req.port
	if port == 0 {
		port = 80
	}
	r, err := http.NewRequest(method, fmt.Sprintf("http://127.0.0.1:%d%s", port+offset, req.path), nil)
	if err != nil {
		t.Fatal(err)
	}
	r.Host = req.host
	for k, v := range req.headers {
		r.Header.Set(k, v)
	}
	c := &http.Client{
		Timeout:       5 * time.Second,
		Transport:     &http.Transport{DisableKeepAlives: true, Proxy: nil},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	resp, err := c.Do(r)
	if err != nil {
		t.Fatalf("%s %s%s: %v", method, req.host, req.path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	a := answer{status: resp.StatusCode, backend: resp.Header.Get("X-Echo"), header: resp.Header, location: resp.Header.Get("Location")}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		_ = json.Unmarshal(b, &a.got)
	}
	return a
}
