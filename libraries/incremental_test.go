package libraries_test

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/haptic-io/haptic/store"
	"github.com/haptic-io/haptic/templating"
	"github.com/haptic-io/haptic/templating/fixtures"
)

// TestRenderAfterChangesMatchesAFreshEngine applies random changes to a
// store (Ingresses edited, conflicting, broken, given fields of the wrong
// type, deleted and re-added;
// Services and EndpointSlices changed; extraContext switched) and after
// each step renders with one long-lived engine, which replays what it
// rendered before, and with a freshly compiled one: files, plan ID and
// problems must be identical, and no render may fail.
func TestRenderAfterChangesMatchesAFreshEngine(t *testing.T) {
	cfg := stockConfig(t)
	objs := fixtures.GenerateIngressMix(60)
	st := storeOf(t, cfg, objs)
	var ingresses, services, slices []map[string]any
	for _, o := range objs {
		switch o["kind"] {
		case "Ingress":
			ingresses = append(ingresses, o)
		case "Service":
			services = append(services, o)
		case "EndpointSlice":
			slices = append(slices, o)
		}
	}
	kept, err := templating.Compile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 11))
	ctx := context.Background()
	compacted, leftOut := 0, 0
	for step := range 150 {
		var change string
		opts := templating.RenderOptions{}
		i := rng.IntN(len(ingresses))
		ing := ingresses[i]
		switch rng.IntN(9) {
		case 0:
			change = "host of " + name(ing)
			ingresses[i] = withHost(ing, fmt.Sprintf("h%d.example.com", rng.IntN(5)))
			mustUpdate(t, st, "ingresses", ingresses[i])
		case 1:
			change = "bad host on " + name(ing)
			ingresses[i] = withHost(ing, "Bad Host")
			mustUpdate(t, st, "ingresses", ingresses[i])
		case 2:
			change = "delete " + name(ing)
			if err := st.Delete("ingresses", namespaceOf(ing), name(ing)); err != nil {
				t.Fatal(err)
			}
		case 3:
			change = "re-add " + name(ing)
			mustUpdate(t, st, "ingresses", ing)
		case 4:
			s := services[rng.IntN(len(services))]
			change = "delete Service " + name(s)
			if err := st.Delete("services", namespaceOf(s), name(s)); err != nil {
				t.Fatal(err)
			}
		case 5:
			s := services[rng.IntN(len(services))]
			change = "re-add Service " + name(s)
			mustUpdate(t, st, "services", s)
		case 6:
			j := rng.IntN(len(slices))
			change = "endpoints of " + name(slices[j])
			slices[j] = withoutEndpoints(slices[j], step)
			mustUpdate(t, st, "endpoints", slices[j])
		case 8:
			// The next change of this Ingress starts from its good version,
			// which fixes it.
			change = "rules of " + name(ing) + " not a list"
			spec := maps.Clone(ing["spec"].(map[string]any))
			spec["rules"] = "notalist"
			bad := maps.Clone(ing)
			bad["spec"] = spec
			mustUpdate(t, st, "ingresses", bad)
		case 7:
			change = "extraContext switched"
			opts.ExtraContext = map[string]any{"ingressClassDefault": true, "backendBalance": "leastconn"}
			if rng.IntN(2) == 0 {
				opts.ExtraContext["ingressClass"] = "other"
			}
		}
		snap := st.Snapshot()
		got, gotProblems, gotErr := kept.Render(ctx, snap, opts)
		if kept.Compact() { // as the controller does after each render
			compacted++
		}
		fresh, err := templating.Compile(cfg)
		if err != nil {
			t.Fatal(err)
		}
		want, wantProblems, wantErr := fresh.Render(ctx, snap, opts)
		if gotErr != nil || wantErr != nil {
			t.Fatalf("step %d (%s): error %v, a fresh engine says %v; want bad objects left out", step, change, gotErr, wantErr)
		}
		if got.Plan.ID() != want.Plan.ID() {
			for k := range want.Files {
				if diff := cmp.Diff(string(want.Files[k].Body), string(got.Files[k].Body)); diff != "" {
					t.Errorf("step %d (%s): %s (-fresh +kept):\n%s", step, change, want.Files[k].Path, diff)
				}
			}
			t.Fatalf("step %d (%s): plan %s, a fresh engine renders %s", step, change, got.Plan.ID(), want.Plan.ID())
		}
		if diff := cmp.Diff(wantProblems, gotProblems); diff != "" {
			t.Fatalf("step %d (%s): problems (-fresh +kept):\n%s", step, change, diff)
		}
		for _, p := range gotProblems {
			if p.Reason == templating.ReasonRenderFailed {
				leftOut++
				break
			}
		}
	}
	if leftOut == 0 {
		t.Error("no render left a broken Ingress out: the test does not cover it")
	}
	if compacted == 0 {
		t.Error("the kept engine never compacted: the test does not cover Compact")
	}
}

func mustUpdate(t *testing.T, st *store.Memory, alias string, obj map[string]any) {
	t.Helper()
	if err := st.Update(alias, obj); err != nil {
		t.Fatal(err)
	}
}

func name(obj map[string]any) string { return obj["metadata"].(map[string]any)["name"].(string) }

func namespaceOf(obj map[string]any) string {
	return obj["metadata"].(map[string]any)["namespace"].(string)
}

// withoutEndpoints returns a copy of the EndpointSlice with its first
// endpoint removed (or all of them back when none is left).
func withoutEndpoints(slice map[string]any, step int) map[string]any {
	out := maps.Clone(slice)
	md := maps.Clone(slice["metadata"].(map[string]any))
	md["resourceVersion"] = fmt.Sprint("step-", step)
	out["metadata"] = md
	eps := slice["endpoints"].([]any)
	if len(eps) > 0 {
		out["endpoints"] = eps[1:]
	}
	return out
}
