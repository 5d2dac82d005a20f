package cluster

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/haptic-io/haptic/gatewayapi"
)

// fakeObjects is an objects lookup over a map.
type fakeObjects map[string]map[string]any // "alias ns/name" → object

func (f fakeObjects) Object(alias, ns, name string) map[string]any { return f[alias+" "+ns+"/"+name] }

func (f fakeObjects) List(alias string) []map[string]any {
	var out []map[string]any
	for k, o := range f {
		if len(k) > len(alias) && k[:len(alias)+1] == alias+" " {
			out = append(out, o)
		}
	}
	return out
}

// applies records the status applies a fake dynamic client receives.
type applies struct {
	mu  sync.Mutex
	got []map[string]any // the applied objects
}

func newStatusWriter(t *testing.T, now *time.Time) (*apiStatusWriter, *applies) {
	t.Helper()
	dyn := dynamicfake.NewSimpleDynamicClient(runtime.NewScheme())
	rec := &applies{}
	dyn.PrependReactor("patch", "*", func(a k8stesting.Action) (bool, runtime.Object, error) {
		p := a.(k8stesting.PatchAction)
		if a.GetSubresource() != "status" {
			t.Errorf("patch of subresource %q, want status", a.GetSubresource())
		}
		var m map[string]any
		if err := json.Unmarshal(p.GetPatch(), &m); err != nil {
			t.Fatal(err)
		}
		rec.mu.Lock()
		rec.got = append(rec.got, m)
		rec.mu.Unlock()
		return true, &unstructured.Unstructured{Object: m}, nil
	})
	return &apiStatusWriter{dyn: dyn, log: slog.New(slog.DiscardHandler), controllerName: "ours", now: func() time.Time { return *now }}, rec
}

func cond(typ, status, ltt string) map[string]any {
	c := map[string]any{"type": typ, "status": status, "reason": typ, "message": "", "observedGeneration": int64(1)}
	if ltt != "" {
		c["lastTransitionTime"] = ltt
	}
	return c
}

// TestStatusWriterWritesOnlyChangesAndKeepsTransitionTimes: a status
// equal to the object's (times aside) is not written; a changed one is,
// with the old lastTransitionTime where the condition's status held and
// now where it flipped; a route keeps other controllers' parents, and our
// parent entry on a route the model dropped is removed.
func TestStatusWriterWritesOnlyChangesAndKeepsTransitionTimes(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	w, rec := newStatusWriter(t, &now)
	old := "2025-01-01T00:00:00Z"
	gwRef := map[string]any{"group": gatewayGroup, "kind": "Gateway", "namespace": "infra", "name": "gw"}
	objs := fakeObjects{
		"gateways infra/gw": {"apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway", "metadata": map[string]any{"namespace": "infra", "name": "gw"},
			"status": map[string]any{"conditions": []any{cond("Accepted", "True", old), cond("Programmed", "False", old)}}},
		"httproutes app/r": {"apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute", "metadata": map[string]any{"namespace": "app", "name": "r"},
			"status": map[string]any{"parents": []any{
				map[string]any{"controllerName": "theirs", "parentRef": map[string]any{"name": "other"}, "conditions": []any{cond("Accepted", "True", old)}},
			}}},
		"httproutes app/stale": {"apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute", "metadata": map[string]any{"namespace": "app", "name": "stale"},
			"status": map[string]any{"parents": []any{
				map[string]any{"controllerName": "ours", "parentRef": gwRef, "conditions": []any{cond("Accepted", "True", old)}},
			}}},
	}
	statuses := []gatewayapi.Status{
		{APIVersion: "gateway.networking.k8s.io/v1", Kind: "Gateway", Namespace: "infra", Name: "gw",
			Status: map[string]any{"conditions": []any{cond("Accepted", "True", ""), cond("Programmed", "False", "")}}},
		{APIVersion: "gateway.networking.k8s.io/v1", Kind: "HTTPRoute", Namespace: "app", Name: "r",
			Status: map[string]any{"parents": []any{map[string]any{"controllerName": "ours", "parentRef": gwRef, "conditions": []any{cond("Accepted", "True", "")}}}}},
	}
	ctx := context.Background()
	writes, failures := w.write(ctx, statuses, objs)
	if failures != 0 || writes != 2 {
		t.Fatalf("first round: %d writes, %d failures; want 2 (the route r and the stale route), 0", writes, failures)
	}
	byName := func() map[string]map[string]any {
		m := map[string]map[string]any{}
		for _, o := range rec.got {
			m[o["metadata"].(map[string]any)["name"].(string)] = o
		}
		return m
	}
	got := byName()
	if _, ok := got["gw"]; ok {
		t.Error("the Gateway's unchanged status was written")
	}
	parents := got["r"]["status"].(map[string]any)["parents"].([]any)
	if len(parents) != 2 || parents[0].(map[string]any)["controllerName"] != "theirs" {
		t.Errorf("route r parents = %v; want theirs kept, then ours", parents)
	}
	if ltt := parents[1].(map[string]any)["conditions"].([]any)[0].(map[string]any)["lastTransitionTime"]; ltt != "2026-01-02T03:04:05Z" {
		t.Errorf("new condition's lastTransitionTime = %v, want now", ltt)
	}
	if ps := got["stale"]["status"].(map[string]any)["parents"].([]any); len(ps) != 0 {
		t.Errorf("stale route parents = %v, want ours removed", ps)
	}

	// The same statuses again, the informer not yet showing the writes:
	// nothing is written.
	rec.got = nil
	if writes, _ := w.write(ctx, statuses, objs); writes != 0 {
		t.Errorf("second round wrote %d: %v", writes, rec.got)
	}

	// Programmed flips: written, Accepted keeps its old time.
	now = now.Add(time.Minute)
	statuses[0].Status = map[string]any{"conditions": []any{cond("Accepted", "True", ""), cond("Programmed", "True", "")}}
	rec.got = nil
	w.write(ctx, statuses, objs)
	gwc := byName()["gw"]["status"].(map[string]any)["conditions"].([]any)
	want := []any{cond("Accepted", "True", old), cond("Programmed", "True", "2026-01-02T03:05:05Z")}
	if diff := cmp.Diff(digestStatus(map[string]any{"c": want}), digestStatus(map[string]any{"c": gwc})); diff != "" || gwc[0].(map[string]any)["lastTransitionTime"] != old || gwc[1].(map[string]any)["lastTransitionTime"] != "2026-01-02T03:05:05Z" {
		t.Errorf("Gateway conditions = %v, want %v", gwc, want)
	}
}

func TestDigestIgnoresTransitionTimesOnly(t *testing.T) {
	a := map[string]any{"conditions": []any{cond("Accepted", "True", "2025-01-01T00:00:00Z")}}
	b := map[string]any{"conditions": []any{cond("Accepted", "True", "2026-01-01T00:00:00Z")}}
	c := map[string]any{"conditions": []any{cond("Accepted", "False", "2025-01-01T00:00:00Z")}}
	if digestStatus(a) != digestStatus(b) || digestStatus(a) == digestStatus(c) {
		t.Error("digest: times must not count, statuses must")
	}
}

// TestStatusWriterWritesAgainWhenTheObjectChangesUnderASettledStatus: a
// status that matched its object is skipped while both stay; when the
// object's status changes (another writer, a restore), the model's is
// written again although the model did not change.
func TestStatusWriterWritesAgainWhenTheObjectChangesUnderASettledStatus(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	w, rec := newStatusWriter(t, &now)
	gw := func(programmed string) map[string]any {
		return map[string]any{"apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway", "metadata": map[string]any{"namespace": "infra", "name": "gw"},
			"status": map[string]any{"conditions": []any{cond("Accepted", "True", "2025-01-01T00:00:00Z"), cond("Programmed", programmed, "2025-01-01T00:00:00Z")}}}
	}
	objs := fakeObjects{"gateways infra/gw": gw("True")}
	statuses := []gatewayapi.Status{{APIVersion: "gateway.networking.k8s.io/v1", Kind: "Gateway", Namespace: "infra", Name: "gw",
		Status: map[string]any{"conditions": []any{cond("Accepted", "True", ""), cond("Programmed", "True", "")}}}}
	ctx := context.Background()
	for round := range 2 {
		if writes, failures := w.write(ctx, statuses, objs); writes != 0 || failures != 0 {
			t.Fatalf("round %d: %d writes, %d failures; want none (the object has the status)", round, writes, failures)
		}
	}
	now = now.Add(time.Minute)
	objs["gateways infra/gw"] = gw("False")
	if writes, _ := w.write(ctx, statuses, objs); writes != 1 || len(rec.got) != 1 {
		t.Fatalf("after the object's status changed: %d writes (%d applies), want 1", writes, len(rec.got))
	}
}

func TestEqualJSONIsDeepEquality(t *testing.T) {
	status := func(reason string, gen int64) map[string]any {
		return map[string]any{"parents": []any{map[string]any{"controllerName": "ours", "parentRef": map[string]any{"name": "gw"},
			"conditions": []any{map[string]any{"type": "Accepted", "status": "True", "reason": reason, "observedGeneration": gen}}}}}
	}
	for _, c := range []struct {
		name string
		a, b any
		want bool
	}{
		{"equal trees", status("Accepted", 1), status("Accepted", 1), true},
		{"a string differs", status("Accepted", 1), status("NotAllowed", 1), false},
		{"an integer differs", status("Accepted", 1), status("Accepted", 2), false},
		{"a key missing", map[string]any{"a": "x", "b": nil}, map[string]any{"a": "x", "c": nil}, false},
		{"lengths differ", []any{"x"}, []any{"x", "x"}, false},
		{"map against list", map[string]any{}, []any{}, false},
		{"nil against empty map", nil, map[string]any{}, false},
		{"bools", true, false, false},
		{"both nil", nil, nil, true},
		{"other types by value", []map[string]any{{"a": int32(1)}}, []map[string]any{{"a": int32(1)}}, true},
	} {
		if got := equalJSON(c.a, c.b); got != c.want {
			t.Errorf("%s: equalJSON = %v, want %v", c.name, got, c.want)
		}
		if got := equalJSON(c.b, c.a); got != c.want {
			t.Errorf("%s, swapped: equalJSON = %v, want %v", c.name, got, c.want)
		}
	}
}
