package templating_test

import (
	"context"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/haptic-io/haptic/store"
	"github.com/haptic-io/haptic/templating"
)

// eachSnippet records every kind of side effect, with conflicts between
// items: item i writes key k<i%7> (the first writer wins), claims c<i%5>,
// reports a problem for multiples of 11 and renders a nested snippet.
const eachSnippet = `
snippets:
  item:
    template: |
      {{- mapEntry "m.map" (print "k" (mod . 7)) (print "v" .) (print "item " .) -}}
      {{- claim "reg" (print "c" (mod . 5)) (print "first " .) -}}
      {{- if eq (mod . 11) 0 }}{{ problem (print "item " .) "Eleven" "multiple of 11" }}{{ end -}}
      {{ render "line" . }}
  line:
    template: '[{{ . }}]'
`

func eachConfig(t *testing.T, body string) *templating.Config {
	t.Helper()
	return configWith(t, `{{- $_ := registerMap (dict "name" "m.map") -}}
`+body+`
{{- range $k, $v := claimed "reg" }}{{ $k }}={{ $v }};{{ end }}
`, eachSnippet)
}

func TestRenderEachMatchesASequentialRange(t *testing.T) {
	// 300 items: several workers on a multi-core machine.
	parallel, pProblems, err := renderConfig(t, eachConfig(t, `{{ renderEach "item" (untilStep 0 300 1) }}`))
	if err != nil {
		t.Fatal(err)
	}
	sequential, sProblems, err := renderConfig(t, eachConfig(t, `{{ range untilStep 0 300 1 }}{{ render "item" . }}{{ end }}`))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(sequential.Files, parallel.Files); diff != "" {
		t.Errorf("files (-sequential +renderEach):\n%s", diff)
	}
	if diff := cmp.Diff(sProblems, pProblems); diff != "" {
		t.Errorf("problems (-sequential +renderEach):\n%s", diff)
	}
	cfg := fileBody(t, parallel, "haproxy.cfg")
	if !strings.HasPrefix(cfg, "[0]\n[1]\n[2]\n") || !strings.Contains(cfg, "[298]\n[299]\nc0=first 0;c1=first 1;") {
		t.Errorf("haproxy.cfg = %.200q…, want items in order, then the first claims", cfg)
	}
	if got := fileBody(t, parallel, "maps/m.map"); !strings.HasPrefix(got, "k0 v0\nk1 v1\n") {
		t.Errorf("m.map = %q, want the first writers", got)
	}
	if len(pProblems) != 28+293 { // 28 multiples of 11, 293 map key conflicts
		t.Errorf("%d problems, want %d", len(pProblems), 28+293)
	}
}

func TestRenderEachRefusesFunctionsThatChangeTheRender(t *testing.T) {
	for _, call := range []string{
		`cacheSet "k" 1`, `claimed "reg"`, `registerMap (dict "name" "n")`,
		`renderEach "line" (list 1)`, `memo "line" "k" 1`, `file (dict "name" "f" "content" "")`,
	} {
		t.Run(call, func(t *testing.T) {
			cfg := configWith(t, `{{ renderEach "bad" (list 1 2) }}`, `
snippets:
  bad: {template: '{{ `+call+` }}'}
  line: {template: 'x'}
`)
			_, _, err := renderConfig(t, cfg)
			if err == nil || !strings.Contains(err.Error(), "cannot be called inside renderEach") {
				t.Errorf("error = %v, want a refusal", err)
			}
		})
	}
}

// backendItems are backend calls that a renderEach item and a sequential
// range must record alike: a Service backend, a bad name, a guid taken by
// an earlier backend, a bad server, and a Service that does not exist.
const backendItems = `(list
  (dict "name" "be_web" "service" (dict "namespace" "shop" "service" "web" "port" 80))
  (dict "name" "bad name")
  (dict "name" "be_b" "guid" "g1")
  (dict "name" "be_c" "guid" "g1")
  (dict "name" "be_d" "servers" (list (dict "name" "s1" "address" "10.0.0.1" "port" 80) (dict "name" "s2" "address" "nope" "port" 80)))
  (dict "name" "be_gone" "service" (dict "namespace" "shop" "service" "gone" "port" 80)))`

func TestRenderEachBackendsMatchASequentialRange(t *testing.T) {
	objs := []map[string]any{
		{"apiVersion": "v1", "kind": "Service", "metadata": map[string]any{"namespace": "shop", "name": "web"}, "spec": map[string]any{"ports": []any{map[string]any{"name": "http", "port": int64(80)}}}},
		{"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice", "metadata": map[string]any{"namespace": "shop", "name": "web-1", "labels": map[string]any{"kubernetes.io/service-name": "web"}},
			"ports": []any{map[string]any{"name": "http", "port": int64(8080)}}, "endpoints": []any{map[string]any{"addresses": []any{"10.1.0.1"}, "targetRef": map[string]any{"name": "pod-a"}}}},
	}
	snippets := "\nsnippets:\n  be:\n    template: |\n      {{ backend (dict \"mode\" \"http\") . }}\n"
	each, eProblems, err := renderConfig(t, configWith(t, `{{ renderEach "be" `+backendItems+` }}`, snippets), objs...)
	if err != nil {
		t.Fatal(err)
	}
	seq, sProblems, err := renderConfig(t, configWith(t, `{{ range `+backendItems+` }}{{ render "be" . }}{{ end }}`, snippets), objs...)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(seq.Plan, each.Plan); diff != "" {
		t.Errorf("plan (-sequential +renderEach):\n%s", diff)
	}
	if diff := cmp.Diff(sProblems, eProblems); diff != "" {
		t.Errorf("problems (-sequential +renderEach):\n%s", diff)
	}
	if len(each.Plan.Backends) != 4 || len(eProblems) != 4 {
		t.Errorf("backends %v, problems %v: want be_b, be_d, be_gone and be_web; a bad name, a taken guid, a bad server and a missing Service", each.Plan.Backends, eProblems)
	}
}

func TestRenderEachBackendRecordedTwiceIsARenderError(t *testing.T) {
	cfg := configWith(t, `{{ renderEach "be" (list 1 2) }}`, "\nsnippets:\n  be:\n    template: |\n      {{ backend (dict \"name\" \"x\") }}\n")
	if _, _, err := renderConfig(t, cfg); err == nil || !strings.Contains(err.Error(), `backend "x" recorded twice`) {
		t.Errorf("error = %v, want the second backend refused", err)
	}
}

func TestRenderEachReportsTheFirstFailingItem(t *testing.T) {
	cfg := configWith(t, `{{ renderEach "item" (untilStep 0 400 1) }}`, `
snippets:
  item: {template: '{{ if or (eq . 10) (eq . 390) }}{{ fail (print "item " .) }}{{ end }}'}
`)
	_, _, err := renderConfig(t, cfg)
	if err == nil || !strings.Contains(err.Error(), "fail: item 10") {
		t.Errorf("error = %v, want item 10's", err)
	}
}

func TestRenderEachMisuseIsARenderError(t *testing.T) {
	for tmpl, want := range map[string]string{
		`{{ renderEach "nosuch" (list 1) }}`: `no template "nosuch"`,
		`{{ renderEach "line" 42 }}`:         "want a list",
	} {
		cfg := configWith(t, tmpl, "\nsnippets:\n  line: {template: x}\n")
		if _, _, err := renderConfig(t, cfg); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error = %v, want %q", tmpl, err, want)
		}
	}
}

func TestClaimKeepsTheFirstValue(t *testing.T) {
	out, _ := renderTemplate(t, `{{ claim "r" "a" 1 }}{{ claim "r" "a" 2 }}{{ claim "r" "b" 3 }}{{ toJSON (claimed "r") }} {{ toJSON (claimed "empty") }}`)
	if diff := cmp.Diff(`{"a":1,"b":3} {}`+"\n", fileBody(t, out, "haproxy.cfg")); diff != "" {
		t.Errorf("haproxy.cfg (-want +got):\n%s", diff)
	}
}

// Renders share pooled template clones and the servers cache: concurrent
// renders of one engine, renderEach included, must not interfere.
func TestRenderEachFromOneEngineConcurrently(t *testing.T) {
	e, err := templating.Compile(eachConfig(t, `{{ renderEach "item" (untilStep 0 300 1) }}`))
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.NewMemory(e.Config().WatchedResources)
	if err != nil {
		t.Fatal(err)
	}
	ids := make(chan string, 4)
	for range 4 {
		go func() {
			out, _, err := e.Render(context.Background(), st.Snapshot(), templating.RenderOptions{})
			if err != nil {
				ids <- "error: " + err.Error()
				return
			}
			ids <- out.Plan.ID()
		}()
	}
	first := <-ids
	for range 3 {
		if id := <-ids; id != first {
			t.Fatalf("concurrent renders gave %s and %s", first, id)
		}
	}
}

func TestClaimedValuesAndRegistriesAreReadOnly(t *testing.T) {
	for _, call := range []string{`set $v "b" 2`, `unset $v "a"`, `merge $v (dict "b" 2)`, `mergeOverwrite $v.inner (dict "b" 2)`} {
		t.Run(call, func(t *testing.T) {
			cfg := configWith(t, `{{ renderEach "x" (list 1) }}{{ $v := index (claimed "reg") "k" }}{{ `+call+` }}`,
				"\nsnippets:\n  x: {template: '{{ claim \"reg\" \"k\" (dict \"a\" 1 \"inner\" (dict)) }}'}\n")
			_, _, err := renderConfig(t, cfg)
			if err == nil || !strings.Contains(err.Error(), "passed to claim and is read-only") {
				t.Errorf("error = %v, want the claimed dict refused", err)
			}
		})
	}
	t.Run("the registry itself", func(t *testing.T) {
		cfg := configWith(t, `{{ renderEach "x" (list 1) }}{{ $_ := set (claimed "reg") "k2" 1 }}`,
			"\nsnippets:\n  x: {template: '{{ claim \"reg\" \"k\" 1 }}'}\n")
		_, _, err := renderConfig(t, cfg)
		if err == nil || !strings.Contains(err.Error(), `is the registry "reg"`) {
			t.Errorf("error = %v, want the registry refused", err)
		}
	})
	cfg := configWith(t, `{{ $d := dict "a" 1 }}{{ $_ := set $d "b" 2 }}{{ $_ := merge $d (dict "c" 3) }}{{ toJSON $d }}`, "")
	out, _, err := renderConfig(t, cfg)
	if err != nil || !strings.Contains(fileBody(t, out, "haproxy.cfg"), `{"a":1,"b":2,"c":3}`) {
		t.Errorf("set and merge on an ordinary dict: %v", err)
	}
}

// failingItem is eachSnippet's item, failing for the items 10, 150 and 299
// after it wrote a map entry, claimed and reported a problem: what a
// failing item did is left out with its output.
const failingItem = `
  failing:
    template: |
      {{- if has . (list 10 150 299) }}{{ mapEntry "m.map" "lost" "v" }}{{ claim "reg" "lost" 1 }}{{ problem "x" "Lost" "lost" }}[{{ . }}]{{ .nokey }}{{ end -}}
      {{ render "item" . -}}
`

func TestRenderEachLeavesOutTheItemsThatFail(t *testing.T) {
	// 300 items: the failing ones in the first chunk, the last chunk and at
	// the very end, with items to resume after.
	cfg := configWith(t, `{{- $_ := registerMap (dict "name" "m.map") -}}
{{ renderEach "failing" (untilStep 0 300 1) }}
{{- range $k, $v := claimed "reg" }}{{ $k }}={{ $v }};{{ end }}
`, eachSnippet+failingItem)
	each, eProblems, err := renderConfig(t, cfg)
	if err != nil {
		t.Fatalf("render: %v; want the failing items left out", err)
	}
	seq, sProblems, err := renderConfig(t, eachConfig(t, `{{ range untilStep 0 300 1 }}{{ if has . (list 10 150 299) }}{{ else }}{{ render "item" . }}{{ end }}{{ end }}`))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(seq.Files, each.Files); diff != "" {
		t.Errorf("files (-sequential range without the failing items +renderEach):\n%s", diff)
	}
	var failed []templating.Problem
	for _, p := range eProblems {
		if p.Reason == templating.ReasonRenderFailed {
			failed = append(failed, p)
		}
	}
	if len(failed) != 3 || len(eProblems) != len(sProblems)+3 {
		t.Fatalf("problems %v, want the sequential range's and one RenderFailed per failing item", failed)
	}
	for i, n := range []int{10, 150, 299} {
		if want := sprintf("renderEach %q item %d", "failing", n); failed[i].Object != want || !contains(failed[i].Message, "can't evaluate field nokey") {
			t.Errorf("problem %d = %v, want it about %s and saying why", i, failed[i], want)
		}
	}
}

func TestRenderEachNamesTheObjectThatFailed(t *testing.T) {
	cfg := configWith(t, `{{ renderEach "host" .resources.ingresses.List }}`, `
snippets:
  host: {template: "{{ range .spec.rules }}{{ .host | lower }} {{ end }}\n"}
`)
	ing := func(name string, rules any) map[string]any {
		return map[string]any{"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
			"metadata": map[string]any{"namespace": "ns", "name": name}, "spec": map[string]any{"rules": rules}}
	}
	out, problems, err := renderConfig(t, cfg,
		ing("a", []any{map[string]any{"host": "A.example"}}),
		ing("b", "notalist"),
		ing("c", []any{map[string]any{"http": map[string]any{}}}), // no host
		ing("d", []any{map[string]any{"host": "d.example"}}))
	if err != nil {
		t.Fatalf("render: %v; want b and c left out", err)
	}
	if got := fileBody(t, out, "haproxy.cfg"); got != "a.example \nd.example \n\n" {
		t.Errorf("haproxy.cfg = %q, want a's and d's hosts only", got)
	}
	want := []templating.Problem{
		{Object: "Ingress ns/b", Ref: templating.ObjectRef{APIVersion: "networking.k8s.io/v1", Kind: "Ingress", Namespace: "ns", Name: "b"},
			Reason: templating.ReasonRenderFailed, Message: `template: host:1:14: executing "host" at <.spec.rules>: range can't iterate over notalist`},
		{Object: "Ingress ns/c", Ref: templating.ObjectRef{APIVersion: "networking.k8s.io/v1", Kind: "Ingress", Namespace: "ns", Name: "c"},
			Reason: templating.ReasonRenderFailed, Message: `template: host:1:26: executing "host" at <.host>: map has no entry for key "host"`},
	}
	if diff := cmp.Diff(want, problems); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
}

func TestRenderEachBoundsTheMessageOfAFailedItem(t *testing.T) {
	// The error quotes the value: 2,000 two-byte runes.
	cfg := configWith(t, `{{ renderEach "x" (list (repeat 2000 "é")) }}`, "\nsnippets:\n  x: {template: '{{ range . }}{{ end }}'}\n")
	_, problems, err := renderConfig(t, cfg)
	if err != nil || len(problems) != 1 {
		t.Fatalf("problems %v, error %v; want one problem", problems, err)
	}
	msg := problems[0].Message
	if len(msg) > 1024+len("…") || !utf8.ValidString(msg) || !strings.HasPrefix(msg, "template: x:1:9:") || !strings.HasSuffix(msg, "é…") {
		t.Errorf("message of %d bytes %.80q…, want at most 1 KiB of valid UTF-8, cut with …", len(msg), msg)
	}
}

func TestRenderEachMisuseInAnItemIsStillARenderError(t *testing.T) {
	// A misuse of the author API is a bug of the templates, whatever the
	// item: it fails the render even when only some items reach it.
	cfg := configWith(t, `{{ renderEach "bad" (list 1 2 3) }}`, `
snippets:
  bad: {template: '{{ if eq . 2 }}{{ cacheSet "k" 1 }}{{ end }}'}
`)
	if _, _, err := renderConfig(t, cfg); err == nil || !strings.Contains(err.Error(), "cannot be called inside renderEach") {
		t.Errorf("error = %v, want the refusal", err)
	}
}
