package libraries_test

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

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

// maxPad bounds the length of the pattern FuzzIngressFieldsCannotChangeTheConfig
// inserts: beyond the 16 KiB HAProxy reads of a map-file line.
const maxPad = 20000

// FuzzIngressFieldsCannotChangeTheConfig renders one Ingress with fuzzed
// host, path, service, port name and annotation, one of them (which)
// made long by inserting pattern, repeated to n bytes (at most maxPad),
// at byte at, and checks that haproxy.cfg is the skeleton plus at most
// one well-formed backend section, that every map line is "key value"
// with a safe value and short enough for HAProxy to read as one line and
// one command, and that a host in hosts.map has a route.
func FuzzIngressFieldsCannotChangeTheConfig(f *testing.F) {
	f.Add("app.example.com", "/api", "web", "http", "ok", uint8(0), uint16(0), uint16(0), "")
	f.Add("evil.com\n    use_backend x", "/a b", "web\" if TRUE", "http\n", "%[req.hdr(x)]", uint8(0), uint16(0), uint16(0), "")
	f.Add("x.com; daemon", "/p%[req.hdr(host)]", "svc", "p;q", "\"quoted\"", uint8(0), uint16(0), uint16(0), "")
	f.Add("*.wild.example.com", "/semi;colon", "a-b", "8080", "\x00", uint8(0), uint16(0), uint16(0), "")
	f.Add("www.evil.test", "/victim.example.com/admin", "web", "http", "", uint8(1), uint16(1), uint16(16369), "a")
	f.Add("a.example.com", "/", "web", "http", "", uint8(0), uint16(0), uint16(300), "b.")
	engine := stockEngine(f)
	skeleton, _ := renderObjects(f, engine, nil)
	base := string(skeleton.Files[indexOf(skeleton, renderplan.ConfigPath)].Body)
	f.Fuzz(func(t *testing.T, host, path, svc, port, annotation string, which uint8, at, n uint16, pattern string) {
		fields := []*string{&host, &path, &svc, &port, &annotation}
		pad(fields[int(which)%len(fields)], int(at), int(n)%(maxPad+1), pattern)
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
		routed := map[string]bool{}
		for _, f := range out.Files {
			if f.Kind != renderplan.FileMap {
				continue
			}
			for _, l := range strings.Split(strings.TrimSuffix(string(f.Body), "\n"), "\n") {
				if l != "" && !mapLine.MatchString(l) {
					t.Fatalf("%s: unsafe line %.80q", f.Path, l)
				}
				// HAProxy reads a map-file line into 16384 bytes.
				if len(l) > 16383 {
					t.Fatalf("%s: a line of %d bytes, which HAProxy would read cut in two", f.Path, len(l))
				}
				if key, _, _ := strings.Cut(l, "/"); f.Path != "maps/hosts.map" {
					routed[key] = true
				}
			}
			if err := renderplan.CheckLines(f.Kind, f.Path, f.Body, 0); err != nil {
				t.Fatalf("%s: %v", f.Path, err)
			}
		}
		for _, l := range strings.Split(strings.TrimSuffix(mapFile(out, "maps/hosts.map"), "\n"), "\n") {
			if h, _, _ := strings.Cut(l, " "); h != "" && !routed[h] {
				t.Fatalf("hosts.map has %q, which no path routes", h)
			}
		}
	})
}

// pad inserts pattern, repeated and cut to n bytes ("a" when empty), into
// *s at byte at (its end when at is past it).
func pad(s *string, at, n int, pattern string) {
	if n == 0 {
		return
	}
	if pattern == "" {
		pattern = "a"
	}
	p := strings.Repeat(pattern, n/len(pattern)+1)[:n]
	at = min(at, len(*s))
	*s = (*s)[:at] + p + (*s)[at:]
}

func mapFile(out *renderplan.Output, path string) string {
	return string(out.Files[indexOf(out, path)].Body)
}

func indexOf(out *renderplan.Output, path string) int {
	for i, f := range out.Files {
		if f.Path == path {
			return i
		}
	}
	panic("no " + path)
}

// goodIngress is an Ingress of namespace ns routing host to Service web.
func goodIngress(ns, name, host string) map[string]any {
	return map[string]any{
		"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
		"metadata": map[string]any{"namespace": ns, "name": name, "creationTimestamp": "2026-01-01T00:00:00Z"},
		"spec": map[string]any{
			"ingressClassName": "haptic",
			"rules": []any{map[string]any{
				"host": host,
				"http": map[string]any{"paths": []any{map[string]any{
					"path": "/", "pathType": "Prefix",
					"backend": map[string]any{"service": map[string]any{"name": "web", "port": map[string]any{"number": int64(80)}}},
				}}},
			}},
		},
	}
}

// TestIngressesWithFieldsOfTheWrongTypeAreLeftOut renders good Ingresses
// with one whose field has the wrong type (as a CRD without schema, an
// annotation or a manifest file can have it): the render succeeds, names
// the bad Ingress in a RenderFailed problem, and is what the good ones
// alone render.
func TestIngressesWithFieldsOfTheWrongTypeAreLeftOut(t *testing.T) {
	engine := stockEngine(t)
	good := []map[string]any{goodIngress("ns", "a", "a.example.com"), goodIngress("ns", "c", "c.example.com")}
	alone, wantProblems := renderObjects(t, engine, good)
	// Parts of a goodIngress.
	spec := func(ing map[string]any) map[string]any { return ing["spec"].(map[string]any) }
	rule := func(ing map[string]any) map[string]any { return spec(ing)["rules"].([]any)[0].(map[string]any) }
	http := func(ing map[string]any) map[string]any { return rule(ing)["http"].(map[string]any) }
	path := func(ing map[string]any) map[string]any { return http(ing)["paths"].([]any)[0].(map[string]any) }
	for name, c := range map[string]struct {
		set  func(ing map[string]any)
		want string // in the problem's message
	}{
		"rules not a list":   {func(ing map[string]any) { spec(ing)["rules"] = "notalist" }, "range can't iterate over notalist"},
		"host a number":      {func(ing map[string]any) { rule(ing)["host"] = int64(42) }, "expected string; got int64"},
		"http not an object": {func(ing map[string]any) { rule(ing)["http"] = "x" }, "cannot index slice/array with type string"},
		"paths a boolean":    {func(ing map[string]any) { http(ing)["paths"] = true }, "range can't iterate over true"},
		"path a list":        {func(ing map[string]any) { path(ing)["path"] = []any{"/"} }, "expected string; got []interface {}"},
		"service port a string": {func(ing map[string]any) {
			path(ing)["backend"] = map[string]any{"service": map[string]any{"name": "web", "port": "80"}}
		}, "cannot index slice/array with type string"},
		"spec a string": {func(ing map[string]any) { ing["spec"] = "x" }, "cannot index slice/array with type string"},
		"metadata.annotations a string": {func(ing map[string]any) {
			delete(spec(ing), "ingressClassName")
			ing["metadata"].(map[string]any)["annotations"] = "x"
		}, "cannot index slice/array with type string"},
	} {
		t.Run(name, func(t *testing.T) {
			bad := goodIngress("ns", "b", "b.example.com")
			c.set(bad)
			out, problems := renderObjects(t, engine, append(slices.Clone(good), bad))
			want := append(slices.Clone(wantProblems), templating.Problem{
				Object: "Ingress ns/b",
				Ref:    templating.ObjectRef{APIVersion: "networking.k8s.io/v1", Kind: "Ingress", Namespace: "ns", Name: "b"},
				Reason: templating.ReasonRenderFailed,
			})
			if diff := cmp.Diff(want, problems, cmpopts.IgnoreFields(templating.Problem{}, "Message")); diff != "" {
				t.Fatalf("problems (-want +got):\n%s", diff)
			}
			if msg := problems[len(problems)-1].Message; !strings.Contains(msg, c.want) || !strings.Contains(msg, "ingress-object") {
				t.Errorf("message %q, want the template error (%q) and where", msg, c.want)
			}
			if diff := cmp.Diff(alone.Files, out.Files); diff != "" {
				t.Errorf("files (-good Ingresses alone +with the bad one):\n%s", diff)
			}
		})
	}
}

func TestAnIngressWithoutNamespaceIsAProblemThatSaysSo(t *testing.T) {
	engine := stockEngine(t)
	good := goodIngress("ns", "a", "a.example.com")
	alone, want := renderObjects(t, engine, []map[string]any{good})
	nons := goodIngress("", "nons", "nons.example.com")
	delete(nons["metadata"].(map[string]any), "namespace")
	out, problems := renderObjects(t, engine, []map[string]any{good, nons})
	want = append([]templating.Problem{{
		Object: "Ingress nons",
		Ref:    templating.ObjectRef{APIVersion: "networking.k8s.io/v1", Kind: "Ingress", Name: "nons"},
		Reason: "NamespaceMissing", Message: "metadata.namespace is missing (an Ingress is namespaced); ignored",
	}}, want...)
	if diff := cmp.Diff(want, problems); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(alone.Files, out.Files); diff != "" {
		t.Errorf("files (-the good Ingress alone +with the one without namespace):\n%s", diff)
	}
}
