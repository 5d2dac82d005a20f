package libraries_test

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/haptic-io/haptic/renderplan"
	"github.com/haptic-io/haptic/templating"
)

// hostileIngress is one Ingress whose host, path, service name, port name
// and annotation come from the caller.
func hostileIngress(host, path, svc, port, annotation string) []map[string]any {
	return []map[string]any{
		{
			"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
			"metadata": map[string]any{
				"namespace": "ns", "name": "ing", "creationTimestamp": "2026-01-01T00:00:00Z",
				"annotations": map[string]any{"example.com/note": annotation},
			},
			"spec": map[string]any{
				"ingressClassName": "haptic",
				"rules": []any{map[string]any{
					"host": host,
					"http": map[string]any{"paths": []any{map[string]any{
						"path": path, "pathType": "Prefix",
						"backend": map[string]any{"service": map[string]any{"name": svc, "port": map[string]any{"name": port}}},
					}}},
				}},
			},
		},
	}
}

// stockEngine compiles the base and ingress libraries.
func stockEngine(t testing.TB) *templating.Engine {
	t.Helper()
	engine, err := templating.Compile(stockConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	return engine
}

// renderObjects renders objs with engine.
func renderObjects(t testing.TB, engine *templating.Engine, objs []map[string]any) (*renderplan.Output, []templating.Problem) {
	t.Helper()
	out, problems, err := engine.Render(context.Background(), storeOf(t, engine.Config(), objs).Snapshot(), templating.RenderOptions{})
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	return out, problems
}

var (
	// backendSection is the only shape object text may take in haproxy.cfg
	// (the service and port parts may hold '_', a legal name character:
	// service "0" port "_" gives be_ns_0__).
	backendSection = regexp.MustCompile(`(?m)^backend be_ns_[a-z0-9_-]+ from haptic-be-[0-9a-f]+\n    guid haptic:be:be_ns_[a-z0-9_-]+\n\n`)
	mapLine        = regexp.MustCompile(`^[^\s#][^\s]* [A-Za-z0-9_.:*-]+$`)
)

// FuzzIngressFieldsCannotChangeTheConfig renders one Ingress with fuzzed
// host, path, service, port name and annotation and checks that
// haproxy.cfg is the skeleton plus at most one well-formed backend
// section, and that every map line is "key value" with a safe value.
func FuzzIngressFieldsCannotChangeTheConfig(f *testing.F) {
	f.Add("app.example.com", "/api", "web", "http", "ok")
	f.Add("evil.com\n    use_backend x", "/a b", "web\" if TRUE", "http\n", "%[req.hdr(x)]")
	f.Add("x.com; daemon", "/p%[req.hdr(host)]", "svc", "p;q", "\"quoted\"")
	f.Add("*.wild.example.com", "/semi;colon", "a-b", "8080", "\x00")
	engine := stockEngine(f)
	skeleton, _ := renderObjects(f, engine, nil)
	base := string(skeleton.Files[indexOf(skeleton, renderplan.ConfigPath)].Body)
	f.Fuzz(func(t *testing.T, host, path, svc, port, annotation string) {
		out, _ := renderObjects(t, engine, hostileIngress(host, path, svc, port, annotation))
		cfg := string(out.Files[indexOf(out, renderplan.ConfigPath)].Body)
		skel := strings.TrimRight(base, "\n")
		if !strings.HasPrefix(cfg, skel) {
			t.Fatalf("haproxy.cfg does not start with the skeleton:\n%s", cfg)
		}
		rest := strings.TrimLeft(cfg[len(skel):], "\n")
		// What follows the skeleton: nothing, or a profile and one backend.
		if rest != "" {
			i := strings.Index(rest, "backend ")
			if i < 0 || !strings.HasPrefix(rest, "defaults haptic-be-") || backendSection.ReplaceAllString(rest[i:], "") != "" {
				t.Fatalf("unexpected text after the skeleton:\n%s", rest)
			}
		}
		for _, f := range out.Files {
			if f.Kind != renderplan.FileMap {
				continue
			}
			for _, l := range strings.Split(strings.TrimSuffix(string(f.Body), "\n"), "\n") {
				if l != "" && !mapLine.MatchString(l) {
					t.Fatalf("%s: unsafe line %q", f.Path, l)
				}
			}
		}
	})
}

func indexOf(out *renderplan.Output, path string) int {
	for i, f := range out.Files {
		if f.Path == path {
			return i
		}
	}
	panic("no " + path)
}
