package templating_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/haptic-io/haptic/store"
	"github.com/haptic-io/haptic/templating"
)

func TestCompositionAndHelperFunctionsRenderAsDocumented(t *testing.T) {
	cfg := configWith(t, `{{ render "greet" "world" }}|{{ renderGlob "ext-*" . }}|{{ renderGlob "none-*" . }}
{{- memo "count" "k" . }}{{ memo "count" "k" . }}{{ memo "count" "other" . }}
{{- $_ := cacheSet "x" (list 1 2) }}|{{ cacheGet "x" }}|{{ .cache.Get "x" }}|{{ .cache.Set "y" "z" }}{{ cacheGet "y" }}|{{ cacheGet "missing" }}
|{{ toJSON (dict "b" 1 "a" (list "x")) }}|{{ keys (dict "b" 1 "a" 2 "c" 3) }}|{{ values (dict "b" 1 "a" 2) }}
|{{ haproxyName "a b/c" }}|{{ haproxyQuote "a\"b$c\\" }}|{{ haproxyFormatQuote "x%[src]" }}|{{ mapPath "m" }} {{ certPath "c" }} {{ filePath "f" }}|{{ .paths.maps }}
|{{ .extraContext.k }}|{{ problem "Ingress ns/x" "Custom" "said so" }}
`, `
extraContext: {k: v}
snippets:
  greet: {template: "hello {{ . }}"}
  ext-b: {template: "B"}
  ext-a: {template: "A"}
  other: {template: "O"}
  count: {template: "{{ $n := add1 (cacheGet \"n\" | default 0) }}{{ $_ := cacheSet \"n\" $n }}{{ $n }}"}
`)
	out, problems, err := renderConfig(t, cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := `hello world|AB|112|[1 2]|[1 2]|zz|<no value>
|{"a":["x"],"b":1}|[a b c]|[2 1]
|a_b_c|"a\"b\$c\\"|"x%%[src]"|maps/m certs/c general/f|maps
|v|
`
	if diff := cmp.Diff(want, fileBody(t, out, "haproxy.cfg")); diff != "" {
		t.Errorf("haproxy.cfg (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]templating.Problem{{Object: "Ingress ns/x", Reason: "Custom", Message: "said so"}}, problems); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
}

func TestAMissingKeyIsARenderErrorNotNoValue(t *testing.T) {
	// Outside renderEach a missing key fails the render (the last good
	// configuration keeps serving); index, hasKey and dig probe optional
	// keys.
	msg := renderError(t, "timeout {{ .extraContext.timeot }}\n")
	if !strings.Contains(msg, `map has no entry for key "timeot"`) {
		t.Errorf("error %q, want the missing key named", msg)
	}
	out, _ := renderTemplate(t, `timeout {{ index .extraContext "timeout" | default "5s" }} {{ hasKey .extraContext "x" }} {{ dig "a" "b" "none" .extraContext }}
`)
	if got := fileBody(t, out, "haproxy.cfg"); got != "timeout 5s false none\n" {
		t.Errorf("haproxy.cfg = %q, want the defaults", got)
	}
}

func TestFailAbortsTheRenderWithAFailError(t *testing.T) {
	cfg := configWith(t, `ok
{{ render "inner" . }}
`, `
snippets:
  inner: {template: "line1\n{{ fail \"no route for x\" }}"}
`)
	_, _, err := renderConfig(t, cfg)
	var fe *templating.FailError
	if !errors.As(err, &fe) || fe.Message != "no route for x" {
		t.Fatalf("error %v is not a FailError with the message", err)
	}
	for _, want := range []string{"render haproxy.cfg", "template: haproxy.cfg:2:3", "template: inner:2:3"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}

func TestCompileErrorsNameTemplateAndLine(t *testing.T) {
	y := resourcesYAML + `
haproxyConfig: {template: "ok"}
snippets:
  broken: {template: "line1\n{{ if }}"}
  unknownfunc: {template: "{{ env \"HOME\" }}"}
maps:
  bad.map: {template: "{{ end }}"}
`
	cfg, err := templating.ParseConfig([]byte(y))
	if err != nil {
		t.Fatal(err)
	}
	_, err = templating.Compile(cfg)
	if err == nil {
		t.Fatal("compile succeeded")
	}
	for _, want := range []string{`template: broken:2: missing value for if`, `template: unknownfunc:1: function "env" not defined`, `template: map:bad.map:1: unexpected {{end}}`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}

func TestNonDeterministicSprigFunctionsAreGone(t *testing.T) {
	for _, fn := range templating.RemovedSprigFuncs() {
		t.Run(fn, func(t *testing.T) {
			cfg, err := templating.ParseConfig([]byte(`haproxyConfig: {template: "{{ ` + fn + ` }}"}`))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := templating.Compile(cfg); err == nil || !strings.Contains(err.Error(), "not defined") {
				t.Errorf("compile of {{ %s }}: %v, want function not defined", fn, err)
			}
		})
	}
}

func TestRenderDepthIsBounded(t *testing.T) {
	cfg := configWith(t, `{{ render "loop" . }}`, `
snippets:
  loop: {template: "{{ render \"loop\" . }}"}
`)
	_, _, err := renderConfig(t, cfg)
	if err == nil || !strings.Contains(err.Error(), "nesting deeper than") {
		t.Fatalf("error %v, want a nesting error", err)
	}
}

func TestRenderStopsOnCancelledContext(t *testing.T) {
	cfg := configWith(t, `x`, "")
	e, err := templating.Compile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	st, _ := store.NewMemory(cfg.WatchedResources)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := e.Render(ctx, st, templating.RenderOptions{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
}

func TestRenderOptionsOverrideExtraContextAndTrace(t *testing.T) {
	cfg := configWith(t, `{{ .extraContext.a }}{{ .extraContext.b }}{{ render "s" . }}`, `
extraContext: {a: "1", b: "2"}
snippets:
  s: {template: "!"}
`)
	e, err := templating.Compile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	st, _ := store.NewMemory(cfg.WatchedResources)
	var events []templating.TraceEvent
	out, _, err := e.Render(context.Background(), st, templating.RenderOptions{
		ExtraContext: map[string]any{"b": "X"},
		Trace:        func(ev templating.TraceEvent) { events = append(events, ev) },
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := fileBody(t, out, "haproxy.cfg"); got != "1X!\n" {
		t.Errorf("haproxy.cfg = %q, want 1X!\\n", got)
	}
	want := []templating.TraceEvent{
		{Template: "haproxy.cfg"},
		{Template: "s", Depth: 1},
		{Template: "s", Depth: 1, End: true, Bytes: 1},
		{Template: "haproxy.cfg", End: true, Bytes: 4},
		{Template: templating.TraceAssemble},
		{Template: templating.TraceAssemble, End: true, Bytes: 4},
	}
	if diff := cmp.Diff(want, events); diff != "" {
		t.Errorf("trace (-want +got):\n%s", diff)
	}
	if cfg.ExtraContext["b"] != "2" {
		t.Error("render options changed the config's extraContext")
	}
}

func TestResourcesAreReachableFromTemplates(t *testing.T) {
	out, _ := renderTemplate(t, `{{ range .resources.services.List }}{{ .metadata.namespace }}/{{ .metadata.name }} {{ end }}
{{- with .resources.services.Get "b" "x" }}|get {{ .metadata.name }}{{ end }}
{{- if not (.resources.services.Get "b" "nope") }}|missing{{ end }}
{{- range .resources.endpoints.Fetch "a" "svc" }}|fetch {{ .metadata.name }}{{ end }}
{{- len (.resources.endpoints.Fetch "a") }}
`, service("b", "x"), service("a", "y"), service("a", "x"),
		slice("a", "s2", "svc", nil), slice("a", "s1", "svc", nil), slice("a", "s3", "other", nil))
	want := "a/x a/y b/x |get x|missing|fetch s1|fetch s23\n"
	if diff := cmp.Diff(want, fileBody(t, out, "haproxy.cfg")); diff != "" {
		t.Errorf("haproxy.cfg (-want +got):\n%s", diff)
	}
}

func TestRenderWithoutHAProxyConfigIsACompileError(t *testing.T) {
	cfg, err := templating.ParseConfig([]byte(`snippets: {a: {template: x}}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := templating.Compile(cfg); err == nil || !strings.Contains(err.Error(), "haproxyConfig is not set") {
		t.Fatalf("compile: %v", err)
	}
}

func TestSnippetNamesMustNotShadowTopLevelTemplates(t *testing.T) {
	cfg := configWith(t, "x", `
snippets:
  "map:x": {template: "y"}
`)
	if _, err := templating.Compile(cfg); err == nil || !strings.Contains(err.Error(), "reserved") {
		t.Fatalf("compile: %v", err)
	}
}

func TestRenderCompilesAndRendersInOneCall(t *testing.T) {
	cfg := configWith(t, `{{ render "nope" . }}`, "")
	st, _ := store.NewMemory(cfg.WatchedResources)
	if _, _, err := templating.Render(context.Background(), cfg, st); err == nil || !strings.Contains(err.Error(), `no template "nope"`) {
		t.Fatalf("error %v, want no template", err)
	}
	if _, _, err := templating.Render(context.Background(), &templating.Config{}, st); err == nil {
		t.Fatal("a config without haproxyConfig rendered")
	}
	if _, _, err := templating.Render(context.Background(), configWith(t, "x", ""), nil); err == nil {
		t.Fatal("a nil store rendered")
	}
}
