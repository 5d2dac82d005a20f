package templating

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/haptic-io/haptic/renderplan"
	"github.com/haptic-io/haptic/store"
)

// segmentConfig writes from renderEach items into a map, two registries
// and backends, with extraContext switches that write the same map,
// registry and backends before or after the calls (then the render may
// not adopt the fold), list the items in reverse or twice (then the fold
// cannot stand for them), write the backends against their name order
// (the assembler then finds their tokens by name) and record a backend
// name twice (a render error). Items with data.fail and backends with
// data.befail fail after recording their effects (they are left out).
const segmentConfig = `
watchedResources:
  items: {apiVersion: v1, resource: configmaps, indexBy: ["metadata.namespace", "metadata.name"]}
  services: {apiVersion: v1, resource: services, indexBy: ["metadata.namespace", "metadata.name"]}
  endpoints: {apiVersion: discovery.k8s.io/v1, resource: endpointslices, indexBy: ["metadata.namespace", 'metadata.labels["kubernetes.io/service-name"]']}
extraContext: {pre: "", post: "", list: ""}
haproxyConfig:
  template: |
    {{- $x := .extraContext -}}
    {{- $_ := registerMap (dict "name" "a.map") -}}
    {{- $_ := registerMap (dict "name" "b.map") -}}
    {{- if eq $x.pre "entry" }}{{ mapEntry "a.map" "k1" "pre" "top" }}{{ end -}}
    {{- if eq $x.pre "claim" }}{{ claim "reg" "c1" "pre" }}{{ end -}}
    {{- if eq $x.pre "held" }}{{ $_ := cacheSet "held" (claimed "reg") }}{{ end -}}
    {{- $items := .resources.items.List -}}
    {{- if eq $x.list "reverse" }}{{ $items = reverse $items }}{{ end -}}
    {{- if eq $x.list "twice" }}{{ $items = concat $items $items }}{{ end -}}
    global
    {{ renderEach "obj" $items }}
    {{- if eq $x.pre "backend" }}
    {{ backend (dict "name" "be_a" "object" "top" "mode" "http") }}
    {{- end }}
    {{- $bes := values (claimed "bes") -}}
    {{- if eq $x.list "dupbe" }}{{ $bes = concat $bes $bes }}{{ end }}
    {{- if eq $x.list "revbe" }}{{ $bes = reverse $bes }}{{ end }}
    {{ renderEach "be" $bes }}
    {{- if eq $x.post "entry" }}{{ mapEntry "a.map" "k2" "post" "top" }}{{ mapEntry "b.map" "k9" "post" "top" }}{{ end -}}
    {{- if eq $x.post "claim" }}{{ claim "reg" "c2" "post" }}{{ end -}}
    {{- if eq $x.post "backend" }}
    {{ backend (dict "name" "be_z" "object" "top" "mode" "http") }}
    {{- end }}
    {{- if eq $x.post "backend-dup" }}
    {{ backend (dict "name" "be_b" "object" "top" "mode" "http") }}
    {{- end }}
    {{- range $k, $v := claimed "reg" }}
    # reg {{ $k }} {{ $v }}
    {{- end }}
    {{- with cacheGet "held" }}
    # held {{ len . }}
    {{- end }}
    # keys {{ keys (claimed "bes") | join "," }}
    # values {{ values (claimed "reg") | join "," }}
snippets:
  obj:
    template: |
      {{- $o := . -}}
      {{- range $k, $v := .data.entries }}{{ mapEntry "a.map" $k $v (print "obj " $o.metadata.name) }}{{ end -}}
      {{- range $k, $v := index .data "more" }}{{ mapEntry "b.map" $k $v (print "obj " $o.metadata.name) }}{{ end -}}
      {{- range $k, $v := .data.claims }}{{ claim "reg" $k $v }}{{ end -}}
      {{- with index .data "backend" }}{{ claim "bes" . (dict "name" . "object" $o.metadata.name "port" (index $o.data "port") "svc" (index $o.data "svc") "fail" (index $o.data "befail")) }}{{ end -}}
      {{- with index .data "problem" }}{{ problem $o.metadata.name "Custom" . }}{{ end -}}
      # obj {{ .metadata.name }}
      {{- with index .data "fail" }}{{ .nokey }}{{ end }}
  be:
    template: |
      {{- if .svc }}
      {{ backend (dict "name" .name "object" .object "mode" "http" "service" (dict "namespace" "ns" "service" .svc "port" "http")) }}
      {{- else }}
      {{ backend (dict "name" .name "object" .object "mode" "http" "servers" (list (dict "name" "s1" "address" "127.0.0.1" "port" (.port | default 80)))) }}
      {{- end }}
      {{- if .fail }}{{ .nokey }}{{ end }}
`

// TestRenderEachFoldsMatchAFreshEngine applies random changes to the
// items and the extraContext switches and after each step renders with a
// long-lived engine (which folds and adopts renderEach segments) and with
// a fresh one that replays every item (as a sequential render records
// effects): files, plan ID, problems and errors must be identical.
func TestRenderEachFoldsMatchAFreshEngine(t *testing.T) {
	cfg, err := ParseConfig([]byte(segmentConfig))
	if err != nil {
		t.Fatal(err)
	}
	kept, err := Compile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.NewMemory(cfg.WatchedResources)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 5))
	pick := func(xs ...string) string { return xs[rng.IntN(len(xs))] }
	version := 0
	newItem := func(name string) map[string]any {
		version++
		data := map[string]any{}
		entries := map[string]any{}
		for range rng.IntN(4) {
			entries[pick("k0", "k1", "k2", "k3", "k4", "k5", "bad key")] = pick("v0", "v1", "v2")
		}
		data["entries"] = entries
		if rng.IntN(3) == 0 {
			data["more"] = map[string]any{pick("k8", "k9"): pick("w0", "w1")}
		}
		claims := map[string]any{}
		for range rng.IntN(3) {
			claims[pick("c0", "c1", "c2", "c3")] = pick("x", "y")
		}
		data["claims"] = claims
		if rng.IntN(4) != 0 {
			data["backend"] = pick("be_a", "be_b", "be_c", "be_d", "Bad Name")
			data["port"] = int64(80 + rng.IntN(2))
		}
		if rng.IntN(2) == 0 {
			data["svc"] = pick("web", "api", "gone")
		}
		if rng.IntN(5) == 0 {
			data["problem"] = pick("p0", "p1")
		}
		if rng.IntN(8) == 0 {
			data["fail"] = true
		}
		if rng.IntN(8) == 0 {
			data["befail"] = true
		}
		return map[string]any{"kind": "ConfigMap", "metadata": map[string]any{
			"namespace": "ns", "name": name, "resourceVersion": fmt.Sprint(version),
		}, "data": data}
	}
	names := make([]string, 14)
	for i := range names {
		names[i] = fmt.Sprintf("item-%02d", i)
		if err := st.Update("items", newItem(names[i])); err != nil {
			t.Fatal(err)
		}
	}
	svcObject := func(name string) map[string]any {
		version++
		return map[string]any{"kind": "Service", "metadata": map[string]any{"namespace": "ns", "name": name, "resourceVersion": fmt.Sprint(version)},
			"spec": map[string]any{"ports": []any{map[string]any{"name": "http", "port": int64(80)}}}}
	}
	sliceObject := func(svc string) map[string]any {
		version++
		eps := []any{}
		for i := range rng.IntN(3) {
			eps = append(eps, map[string]any{"addresses": []any{fmt.Sprintf("10.0.0.%d", i+1)}, "conditions": map[string]any{"ready": rng.IntN(4) != 0}})
		}
		return map[string]any{"kind": "EndpointSlice", "metadata": map[string]any{"namespace": "ns", "name": svc + "-1", "resourceVersion": fmt.Sprint(version),
			"labels": map[string]any{"kubernetes.io/service-name": svc}},
			"addressType": "IPv4", "ports": []any{map[string]any{"name": "http", "port": int64(8080)}}, "endpoints": eps}
	}
	for _, svc := range []string{"web", "api"} {
		if err := st.Update("services", svcObject(svc)); err != nil {
			t.Fatal(err)
		}
		if err := st.Update("endpoints", sliceObject(svc)); err != nil {
			t.Fatal(err)
		}
	}
	extra := map[string]any{"pre": "", "post": "", "list": ""}
	ctx := context.Background()
	adopted, lastAdopted, errs := 0, int64(0), 0
	for step := range 600 {
		var change string
		switch n := names[rng.IntN(len(names))]; rng.IntN(11) {
		case 0, 1, 2, 3:
			change = "update " + n
			if err := st.Update("items", newItem(n)); err != nil {
				t.Fatal(err)
			}
		case 4:
			change = "delete " + n
			if err := st.Delete("items", "ns", n); err != nil {
				t.Fatal(err)
			}
		case 5:
			change = "add " + n
			if err := st.Update("items", newItem(n)); err != nil {
				t.Fatal(err)
			}
		case 6:
			extra["pre"] = pick("", "", "entry", "claim", "held", "backend")
			change = fmt.Sprintf("pre=%v", extra["pre"])
		case 7:
			extra["post"] = pick("", "", "entry", "claim", "backend", "backend", "backend-dup")
			change = fmt.Sprintf("post=%v", extra["post"])
		case 8:
			extra["list"] = pick("", "", "", "reverse", "twice", "dupbe", "revbe")
			change = fmt.Sprintf("list=%v", extra["list"])
		case 9:
			svc := pick("web", "api")
			switch rng.IntN(3) {
			case 0:
				change = "delete Service " + svc
				if err := st.Delete("services", "ns", svc); err != nil {
					t.Fatal(err)
				}
			case 1:
				change = "add Service " + svc
				if err := st.Update("services", svcObject(svc)); err != nil {
					t.Fatal(err)
				}
			default:
				change = "endpoints of " + svc
				if err := st.Update("endpoints", sliceObject(svc)); err != nil {
					t.Fatal(err)
				}
			}
		case 10:
			change = "nothing"
		}
		snap := st.Snapshot()
		opts := RenderOptions{ExtraContext: map[string]any{"pre": extra["pre"], "post": extra["post"], "list": extra["list"]}}
		fresh, err := Compile(cfg)
		if err != nil {
			t.Fatal(err)
		}
		fresh.replayOnly = true // the reference: a sequential render
		wantOut, wantProblems, wantErr := fresh.Render(ctx, snap, opts)
		gotOut, gotProblems, gotErr := kept.Render(ctx, snap, opts)
		if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
			t.Fatalf("step %d (%s): error %v, a fresh engine %v", step, change, gotErr, wantErr)
		}
		if wantErr != nil {
			errs++
			if errs == 1 {
				t.Logf("step %d (%s): %v", step, change, wantErr)
			}
			continue
		}
		if diff := cmp.Diff(bodies(wantOut.Files), bodies(gotOut.Files)); diff != "" {
			t.Fatalf("step %d (%s): files differ from a fresh engine's (-fresh +kept):\n%s", step, change, diff)
		}
		if diff := cmp.Diff(wantProblems, gotProblems); diff != "" {
			t.Fatalf("step %d (%s): problems differ (-fresh +kept):\n%s", step, change, diff)
		}
		if w, g := wantOut.Plan.ID(), gotOut.Plan.ID(); w != g {
			t.Fatalf("step %d (%s): plan ID %s, a fresh engine %s", step, change, g, w)
		}
		if n := kept.eachAdopted.Load(); n > lastAdopted {
			adopted++
			lastAdopted = n
		}
	}
	// The switches must leave many renders adopting folds, or the test
	// would only compare replays.
	if adopted < 200 {
		t.Fatalf("only %d of 600 renders adopted a fold (%d failed alike)", adopted, errs)
	}
	t.Logf("%d of 600 renders adopted a fold, %d failed alike", adopted, errs)
}

func bodies(files []renderplan.FileContent) map[string]string {
	m := make(map[string]string, len(files))
	for _, f := range files {
		m[f.Path] = string(f.Body)
	}
	return m
}
