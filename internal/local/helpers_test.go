package local_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/haptic-io/haptic/internal/haproxytest"
	"github.com/haptic-io/haptic/internal/local"
	"github.com/haptic-io/haptic/libraries"
	"github.com/haptic-io/haptic/templating"
)

// waitTimeout bounds every wait for local mode to do something; it guards
// against hangs and is never an assertion on speed.
const waitTimeout = 30 * time.Second

// env is one running local mode on real HAProxy.
type env struct {
	t         *testing.T
	site      *site
	resources string
	cfgPath   string
	info      local.Info
	reg       *prometheus.Registry
	url       string
	// stop stops local mode and waits for Run to return (at most
	// waitTimeout); it is also a cleanup of the test.
	stop func()
}

// baseOperatorConfig is the operator config of the tests: an errorfile
// from a general file that does not need a reload when it changes (so a
// broken one goes out as file_only).
const baseOperatorConfig = `
snippets:
  base-frontend-http-errorfile:
    template: "    errorfile 503 {{ file (dict \"name\" \"e503.http\" \"content\" \"HTTP/1.0 503 Service Unavailable\\r\\nContent-Length: 0\\r\\n\\r\\n\" \"reloadOnChange\" false) }}\n"
`

// site is what local mode runs on: a resources directory, the operator
// config, a work directory and the frontend ports. Starting local mode on
// the same site again is a restart on existing state.
type site struct {
	t           *testing.T
	bin         string
	resources   string
	cfgPath     string
	work        string
	port, stats int
}

// newSite makes a site for HAProxy series with operator config text and a
// resources directory holding files.
func newSite(t *testing.T, series, operator string, files map[string]string) *site {
	t.Helper()
	dir := t.TempDir()
	s := &site{
		t:         t,
		bin:       haproxytest.Binary(t, series),
		resources: filepath.Join(dir, "resources"),
		cfgPath:   filepath.Join(dir, "config.yaml"),
		work:      filepath.Join(dir, "work"),
		port:      haproxytest.FreePort(t),
		stats:     haproxytest.FreePort(t),
	}
	if err := os.MkdirAll(s.resources, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range files {
		writeAtomic(t, filepath.Join(s.resources, name), content)
	}
	writeAtomic(t, s.cfgPath, operator)
	return s
}

// config is the site's local mode configuration, metrics on reg.
func (s *site) config(reg *prometheus.Registry) local.Config {
	return local.Config{
		LoadConfig:        func() (*templating.Config, error) { return loadConfig(s.cfgPath) },
		ConfigPath:        s.cfgPath,
		Resources:         s.resources,
		HAProxy:           s.bin,
		Listen:            fmt.Sprintf("127.0.0.1:%d", s.port),
		StatsListen:       fmt.Sprintf("127.0.0.1:%d", s.stats),
		WorkDir:           s.work,
		Debounce:          0,
		MinReloadInterval: -1,
		Log:               slog.New(slog.NewTextHandler(tWriter{s.t}, &slog.HandlerOptions{Level: slog.LevelInfo})),
		Registry:          reg,
		HAProxyOutput:     tWriter{s.t},
	}
}

// startLocal runs local mode on HAProxy series with the stock libraries
// and operator config text, watching a fresh resources directory holding
// files, and waits until the first plan is applied.
func startLocal(t *testing.T, series, operator string, files map[string]string) *env {
	t.Helper()
	return newSite(t, series, operator, files).start()
}

// start runs local mode on the site in this process and waits until the
// first plan is applied.
func (s *site) start() *env {
	t := s.t
	t.Helper()
	e := &env{t: t, site: s, resources: s.resources, cfgPath: s.cfgPath, reg: prometheus.NewRegistry()}
	ready := make(chan local.Info, 1)
	cfg := s.config(e.reg)
	cfg.Ready = func(i local.Info) { ready <- i }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	var runErr error
	go func() {
		defer close(done)
		runErr = local.Run(ctx, cfg)
	}()
	var once sync.Once
	e.stop = func() {
		once.Do(func() {
			cancel()
			select {
			case <-done:
				if runErr != nil {
					t.Errorf("local.Run: %v", runErr)
				}
			case <-time.After(waitTimeout):
				t.Error("local.Run did not return after cancel")
			}
		})
	}
	t.Cleanup(e.stop)
	select {
	case e.info = <-ready:
	case <-done:
		t.Fatalf("local.Run: %v", runErr)
	case <-time.After(waitTimeout):
		t.Fatal("local mode did not become ready")
	}
	e.url = "http://" + e.info.HTTPAddr
	e.waitApplied("")
	return e
}

// loadConfig merges the stock libraries and the operator config at path.
func loadConfig(path string) (*templating.Config, error) {
	cfgs, err := libraries.Load("base", "ingress")
	if err != nil {
		return nil, err
	}
	op, err := templating.LoadConfig(path)
	if err != nil {
		return nil, err
	}
	return templating.Merge(cfgs[0], append(cfgs[1:], op)...), nil
}

// write writes a resource file atomically (hidden temporary, rename).
func (e *env) write(name, content string) {
	e.t.Helper()
	writeAtomic(e.t, filepath.Join(e.resources, name), content)
}

func (e *env) writeConfig(content string) {
	e.t.Helper()
	writeAtomic(e.t, e.cfgPath, content)
}

func writeAtomic(t *testing.T, path, content string) {
	t.Helper()
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp")
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

func (e *env) remove(name string) {
	e.t.Helper()
	if err := os.Remove(filepath.Join(e.resources, name)); err != nil {
		e.t.Fatal(err)
	}
}

// waitApplied waits until a plan other than before is rendered and the
// pod runs it, and returns its ID.
func (e *env) waitApplied(before string) string {
	e.t.Helper()
	var id string
	e.eventually("a new plan to be applied", func() bool {
		s := e.info.Loop.Status()
		id = s.PlanID
		return id != "" && id != before && s.Pods[local.PodName] == id
	})
	return id
}

// eventually polls cond every millisecond until it holds or waitTimeout
// passes.
func (e *env) eventually(what string, cond func() bool) {
	e.t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			e.t.Fatalf("timed out waiting for %s (status %+v)", what, e.info.Loop.Status())
		}
		time.Sleep(time.Millisecond)
	}
}

// get sends one request with Host host.
func (e *env) get(host, path string) (int, string) {
	e.t.Helper()
	code, body, err := haproxytest.TryGet(e.url+path, host)
	if err != nil {
		e.t.Fatalf("GET %s%s (Host %s): %v", e.url, path, host, err)
	}
	return code, body
}

// waitStatus polls host until it answers code.
func (e *env) waitStatus(host string, code int) string {
	e.t.Helper()
	var body string
	e.eventually(fmt.Sprintf("%s to answer %d", host, code), func() bool {
		c, b, err := haproxytest.TryGet(e.url+"/", host)
		body = b
		return err == nil && c == code
	})
	return body
}

// metric returns the value of a counter or gauge whose labels include
// the given values.
func (e *env) metric(name string, labels ...string) float64 {
	e.t.Helper()
	mfs, err := e.reg.Gather()
	if err != nil {
		e.t.Fatal(err)
	}
	sum := 0.0
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	metrics:
		for _, m := range mf.GetMetric() {
			for _, want := range labels {
				found := false
				for _, lp := range m.GetLabel() {
					if lp.GetValue() == want {
						found = true
					}
				}
				if !found {
					continue metrics
				}
			}
			sum += m.GetCounter().GetValue() + m.GetGauge().GetValue()
		}
	}
	return sum
}

// reloads is haptic_haproxy_reloads_total of the local pod.
func (e *env) reloads() float64 { return e.metric("haptic_haproxy_reloads_total", local.PodName) }

// workerPID is the PID of the serving HAProxy worker, as the agent says.
func (e *env) workerPID() int {
	e.t.Helper()
	st, err := e.info.Agent.State(context.Background())
	if err != nil {
		e.t.Fatal(err)
	}
	return st.Worker.PID
}

// route returns the manifests of one route: an Ingress for host → Service
// name, the Service, and an EndpointSlice with the echo servers.
func route(name, host string, echoes ...*haproxytest.Echo) string {
	var b strings.Builder
	fmt.Fprintf(&b, `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {namespace: t, name: %[1]s, creationTimestamp: "2026-01-01T00:00:00Z"}
spec:
  ingressClassName: haptic
  rules:
    - host: %[2]s
      http:
        paths:
          - {path: /, pathType: Prefix, backend: {service: {name: %[1]s, port: {number: 80}}}}
---
`, name, host)
	b.WriteString(service(name, echoes...))
	return b.String()
}

// service returns a Service and one EndpointSlice per echo server.
func service(name string, echoes ...*haproxytest.Echo) string {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: v1\nkind: Service\nmetadata: {namespace: t, name: %s}\nspec: {ports: [{port: 80}]}\n", name)
	for i, e := range echoes {
		fmt.Fprintf(&b, `---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {namespace: t, name: %[1]s-%[2]d, labels: {kubernetes.io/service-name: %[1]s}}
addressType: IPv4
ports: [{port: %[3]d}]
endpoints:
  - {addresses: [127.0.0.1], conditions: {ready: true}, targetRef: {kind: Pod, namespace: t, name: %[4]s}}
`, name, i, e.Port, e.Name)
	}
	return b.String()
}

type tWriter struct{ t *testing.T }

func (w tWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
