package templating

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/cespare/xxhash/v2"
	"github.com/google/go-cmp/cmp"

	"github.com/haptic-io/haptic/store"
)

// memoConfig renders "item" over the Ingresses, oldest first, into
// haproxy.cfg and a map; the snippet reads the cache entry "suffix",
// which the config sets from extraContext.
const memoConfig = `
watchedResources:
  ingresses: {apiVersion: networking.k8s.io/v1, resource: ingresses, indexBy: ["metadata.namespace", "metadata.name"]}
  services:  {apiVersion: v1, resource: services, indexBy: ["metadata.namespace", "metadata.name"]}
extraContext: {suffix: a, register: true}
haproxyConfig:
  template: |
    {{- if .extraContext.register }}{{ $_ := registerMap (dict "name" "m.map") }}{{ end -}}
    {{- $_ := cacheSet "suffix" .extraContext.suffix -}}
    {{- $_ := cacheSet "res" .resources -}}
    {{ renderEach "item" .resources.ingresses.List }}
    {{ renderEach "count" .resources.ingresses.List }}
snippets:
  item:
    template: |
      {{- mapEntry "m.map" .metadata.name (cacheGet "suffix") -}}
      {{ .metadata.name }}-{{ cacheGet "suffix" }}
  count:
    template: |
      {{- /* reads the store through a cached accessor */ -}}
      {{ .metadata.name }} sees {{ len ((cacheGet "res").services.List) }} services
`

func memoFixture(t *testing.T, n int) (*Engine, *store.Memory) {
	t.Helper()
	cfg, err := ParseConfig([]byte(memoConfig))
	if err != nil {
		t.Fatal(err)
	}
	e, err := Compile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.NewMemory(cfg.WatchedResources)
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if err := st.Update("ingresses", memoObject("Ingress", fmt.Sprintf("ing-%02d", i), "1")); err != nil {
			t.Fatal(err)
		}
	}
	return e, st
}

func memoObject(kind, name, rv string) map[string]any {
	return map[string]any{"kind": kind, "metadata": map[string]any{"namespace": "ns", "name": name, "resourceVersion": rv}}
}

// renderCounting renders and returns haproxy.cfg and how many "item" and
// "count" items the engine executed rather than replayed.
func renderCounting(t *testing.T, e *Engine, st Store, opts RenderOptions) (string, int64) {
	t.Helper()
	before := e.eachExecuted.Load()
	out, _, err := e.Render(context.Background(), st, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range out.Files {
		if f.Path == "haproxy.cfg" {
			return string(f.Body), e.eachExecuted.Load() - before
		}
	}
	t.Fatal("no haproxy.cfg")
	return "", 0
}

func TestRenderEachExecutesOnlyTheItemsThatChanged(t *testing.T) {
	e, st := memoFixture(t, 40)
	// "count" items read the store, so they run on every render: 40 each.
	if _, n := renderCounting(t, e, st.Snapshot(), RenderOptions{}); n != 80 {
		t.Fatalf("first render executed %d items, want 80", n)
	}
	if _, n := renderCounting(t, e, st.Snapshot(), RenderOptions{}); n != 40 {
		t.Errorf("unchanged store: executed %d items, want the 40 store readers", n)
	}
	if err := st.Update("ingresses", memoObject("Ingress", "ing-07", "2")); err != nil {
		t.Fatal(err)
	}
	if _, n := renderCounting(t, e, st.Snapshot(), RenderOptions{}); n != 41 {
		t.Errorf("one Ingress replaced: executed %d items, want 1 + 40", n)
	}
	if err := st.Delete("ingresses", "ns", "ing-08"); err != nil {
		t.Fatal(err)
	}
	cfg, n := renderCounting(t, e, st.Snapshot(), RenderOptions{})
	if n != 39 || strings.Contains(cfg, "ing-08") {
		t.Errorf("one Ingress deleted: executed %d items (want 39), ing-08 in output: %v", n, strings.Contains(cfg, "ing-08"))
	}
}

func TestRenderEachRunsItemsAgainWhenACacheValueTheyReadChanges(t *testing.T) {
	e, st := memoFixture(t, 5)
	snap := st.Snapshot()
	renderCounting(t, e, snap, RenderOptions{})
	cfg, n := renderCounting(t, e, snap, RenderOptions{ExtraContext: map[string]any{"suffix": "b"}})
	if n != 10 || !strings.Contains(cfg, "ing-03-b") || strings.Contains(cfg, "-a\n") {
		t.Errorf("suffix changed: executed %d items (want 10); output:\n%s", n, cfg)
	}
}

func TestRenderEachItemsThatReadTheStoreFollowIt(t *testing.T) {
	e, st := memoFixture(t, 3)
	cfg, _ := renderCounting(t, e, st.Snapshot(), RenderOptions{})
	if !strings.Contains(cfg, "ing-00 sees 0 services") {
		t.Fatalf("output:\n%s", cfg)
	}
	if err := st.Update("services", memoObject("Service", "web", "1")); err != nil {
		t.Fatal(err)
	}
	if cfg, _ := renderCounting(t, e, st.Snapshot(), RenderOptions{}); !strings.Contains(cfg, "ing-00 sees 1 services") {
		t.Errorf("a Service was added, the Ingresses did not change; output:\n%s", cfg)
	}
}

func TestRenderEachDoesNotReplayIntoAMapThatIsNoLongerRegistered(t *testing.T) {
	e, st := memoFixture(t, 3)
	snap := st.Snapshot()
	renderCounting(t, e, snap, RenderOptions{})
	opts := RenderOptions{ExtraContext: map[string]any{"register": false}}
	out, problems, err := e.Render(context.Background(), snap, opts)
	if err != nil {
		t.Fatal(err)
	}
	fresh, _ := memoFixture(t, 0)
	want, wantProblems, err := fresh.Render(context.Background(), snap, opts)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(wantProblems, problems); diff != "" || len(problems) != 3 {
		t.Errorf("map no longer registered: problems (-fresh engine +replaying engine):\n%s\nwant 3, one per Ingress", diff)
	}
	if diff := cmp.Diff(want.Files, out.Files); diff != "" {
		t.Errorf("map no longer registered: files (-fresh engine +replaying engine):\n%s", diff)
	}
}

func TestHapticEachItemIsRefusedOutsideTheWrapper(t *testing.T) {
	cfg, err := ParseConfig([]byte(`
haproxyConfig:
  template: '{{ renderEach "x" (list 1 2) }}'
snippets:
  x:
    template: '{{ hapticEachItem 1 }}'
`))
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = Render(context.Background(), cfg, &store.Snapshot{})
	if err == nil || !strings.Contains(err.Error(), "internal to renderEach") {
		t.Errorf("error %v, want hapticEachItem refused", err)
	}
}

func TestFingerprintsTellPlainValuesApart(t *testing.T) {
	values := []any{
		nil, true, false, "", "1", 1, int64(2), 1.5, "ab",
		[]any{"a", "b"}, []any{"ab"}, []any{}, []string{"a", "b"},
		map[string]any{}, map[string]any{"a": "b"}, map[string]any{"ab": ""},
		map[string]any{"a": nil}, map[string]any{"a": []any{nil}},
	}
	seen := map[uint64]int{}
	for i, v := range values {
		h := xxhash.New()
		if !fingerprint(h, v) {
			t.Fatalf("%#v: not plain data", v)
		}
		fp := h.Sum64()
		if j, dup := seen[fp]; dup {
			t.Errorf("%#v and %#v have the same fingerprint", values[j], v)
		}
		seen[fp] = i
	}
	for _, v := range []any{&Resources{}, func() {}, map[string]any{"x": &Cache{}}} {
		if fingerprint(xxhash.New(), v) {
			t.Errorf("%#v: fingerprinted as plain data", v)
		}
	}
}

func TestRenderEachReplaysInvalidMapEntriesAsProblems(t *testing.T) {
	cfg, err := ParseConfig([]byte(`
watchedResources:
  ingresses: {apiVersion: networking.k8s.io/v1, resource: ingresses, indexBy: ["metadata.namespace", "metadata.name"]}
haproxyConfig:
  template: |
    {{- $_ := registerMap (dict "name" "m.map") -}}
    {{ renderEach "item" .resources.ingresses.List }}
snippets:
  item:
    template: '{{ mapEntry "m.map" (print .metadata.name " x") "v" }}{{ mapEntry "m.map" .metadata.name "v" }}'
`))
	if err != nil {
		t.Fatal(err)
	}
	e, err := Compile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.NewMemory(cfg.WatchedResources)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Update("ingresses", memoObject("Ingress", "a", "1")); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		out, problems, err := e.Render(context.Background(), st.Snapshot(), RenderOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(problems) != 1 || problems[0].Reason != ReasonMapEntryInvalid || !strings.Contains(problems[0].Message, `key "a x"`) {
			t.Errorf("render %d: problems %v, want the key with a space refused", i, problems)
		}
		if len(out.Plan.Maps) != 1 || len(out.Plan.Maps[0].Entries) != 1 {
			t.Errorf("render %d: maps %v, want the one valid entry", i, out.Plan.Maps)
		}
	}
	if n := e.eachExecuted.Load(); n != 1 {
		t.Errorf("executed %d items, want 1 (the second render replays)", n)
	}
}

func TestFreshRenderReplaysNothingAndRendersTheSame(t *testing.T) {
	e, st := memoFixture(t, 10)
	snap := st.Snapshot()
	warm, _ := renderCounting(t, e, snap, RenderOptions{})
	fresh, n := renderCounting(t, e, snap, RenderOptions{Fresh: true})
	if n != 20 || fresh != warm {
		t.Errorf("Fresh render executed %d items (want 20); same output: %v", n, fresh == warm)
	}
	if _, n := renderCounting(t, e, snap, RenderOptions{}); n != 10 {
		t.Errorf("after a Fresh render, the next executed %d items, want the 10 store readers", n)
	}
}

// hostConfig renders each Ingress's spec.host into haproxy.cfg, a map and
// a registry; an Ingress without spec.host fails its item.
const hostConfig = `
watchedResources:
  ingresses: {apiVersion: networking.k8s.io/v1, resource: ingresses, indexBy: ["metadata.namespace", "metadata.name"]}
haproxyConfig:
  template: |
    {{- $_ := registerMap (dict "name" "m.map") -}}
    {{ renderEach "host" .resources.ingresses.List }}
    {{- range $k, $_ := claimed "hosts" }}claimed {{ $k }}
    {{ end -}}
snippets:
  host:
    template: |
      {{- mapEntry "m.map" .spec.host .metadata.name }}{{ claim "hosts" .spec.host true -}}
      {{ .metadata.name }} {{ .spec.host }}
`

func hostObject(name, host string) map[string]any {
	spec := map[string]any{}
	if host != "" {
		spec["host"] = host
	}
	return map[string]any{"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
		"metadata": map[string]any{"namespace": "ns", "name": name}, "spec": spec}
}

// renderAgainstFresh renders snap with e and with a fresh engine, fails
// the test when they differ, and returns e's haproxy.cfg, map, problems
// and the items e executed.
func renderAgainstFresh(t *testing.T, cfg *Config, e *Engine, snap Store) (string, string, []Problem, int64) {
	t.Helper()
	before := e.eachExecuted.Load()
	out, problems, err := e.Render(context.Background(), snap, RenderOptions{})
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	n := e.eachExecuted.Load() - before
	fresh, err := Compile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	want, wantProblems, err := fresh.Render(context.Background(), snap, RenderOptions{})
	if err != nil {
		t.Fatalf("fresh render: %v", err)
	}
	if diff := cmp.Diff(want.Files, out.Files); diff != "" {
		t.Fatalf("files (-fresh engine +kept engine):\n%s", diff)
	}
	if diff := cmp.Diff(wantProblems, problems); diff != "" {
		t.Fatalf("problems (-fresh engine +kept engine):\n%s", diff)
	}
	var cfgText, mapText string
	for _, f := range out.Files {
		switch f.Path {
		case "haproxy.cfg":
			cfgText = string(f.Body)
		case "maps/m.map":
			mapText = string(f.Body)
		}
	}
	return cfgText, mapText, problems, n
}

func hostFixture(t *testing.T) (*Config, *Engine, *store.Memory) {
	t.Helper()
	cfg, err := ParseConfig([]byte(hostConfig))
	if err != nil {
		t.Fatal(err)
	}
	e, err := Compile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.NewMemory(cfg.WatchedResources)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		name := fmt.Sprintf("ing-%02d", i)
		if err := st.Update("ingresses", hostObject(name, name+".example")); err != nil {
			t.Fatal(err)
		}
	}
	return cfg, e, st
}

func TestRenderEachLeavesOutAnItemThatBreaksAndKeepsNoneOfItsOutput(t *testing.T) {
	cfg, e, st := hostFixture(t)
	if out, _, _, _ := renderAgainstFresh(t, cfg, e, st.Snapshot()); !strings.Contains(out, "ing-03 ing-03.example") {
		t.Fatalf("haproxy.cfg before the change:\n%s", out)
	}
	if err := st.Update("ingresses", hostObject("ing-03", "")); err != nil {
		t.Fatal(err)
	}
	out, m, problems, n := renderAgainstFresh(t, cfg, e, st.Snapshot())
	if n != 1 || strings.Contains(out, "ing-03") || strings.Contains(m, "ing-03") {
		t.Errorf("ing-03 broke: executed %d items (want 1); its output, map entry or claim kept:\n%s\n%s", n, out, m)
	}
	if len(problems) != 1 || problems[0].Object != "Ingress ns/ing-03" || problems[0].Reason != ReasonRenderFailed {
		t.Errorf("problems %v, want ing-03's RenderFailed", problems)
	}
	// The broken item runs again in every render; the others replay.
	if _, _, problems, n := renderAgainstFresh(t, cfg, e, st.Snapshot()); n != 1 || len(problems) != 1 {
		t.Errorf("same store again: executed %d items (want 1), problems %v", n, problems)
	}
	// A later change to another object goes through; ing-03 stays out.
	if err := st.Update("ingresses", hostObject("ing-07", "seven.example")); err != nil {
		t.Fatal(err)
	}
	out, _, problems, n = renderAgainstFresh(t, cfg, e, st.Snapshot())
	if n != 2 || !strings.Contains(out, "ing-07 seven.example") || strings.Contains(out, "ing-03") || len(problems) != 1 {
		t.Errorf("ing-07 changed: executed %d items (want 2), problems %v, haproxy.cfg:\n%s", n, problems, out)
	}
}

func TestRenderEachRendersAFailedItemOnceItIsFixed(t *testing.T) {
	cfg, e, st := hostFixture(t)
	if err := st.Update("ingresses", hostObject("ing-05", "")); err != nil {
		t.Fatal(err)
	}
	if out, _, problems, _ := renderAgainstFresh(t, cfg, e, st.Snapshot()); strings.Contains(out, "ing-05") || len(problems) != 1 {
		t.Fatalf("ing-05 without host: problems %v, haproxy.cfg:\n%s", problems, out)
	}
	if err := st.Update("ingresses", hostObject("ing-05", "five.example")); err != nil {
		t.Fatal(err)
	}
	out, m, problems, n := renderAgainstFresh(t, cfg, e, st.Snapshot())
	if n != 1 || !strings.Contains(out, "ing-05 five.example") || !strings.Contains(out, "claimed five.example") ||
		!strings.Contains(m, "five.example ing-05") || len(problems) != 0 {
		t.Errorf("ing-05 fixed: executed %d items (want 1), problems %v, output:\n%s\n%s", n, problems, out, m)
	}
}
