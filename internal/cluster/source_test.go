package cluster

import (
	"context"
	"errors"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"

	"github.com/haptic-io/haptic/internal/controller"
)

var servicesGVR = schema.GroupVersionResource{Version: "v1", Resource: "services"}

func unstructuredService(ns, name string, labels map[string]any) *unstructured.Unstructured {
	md := map[string]any{"namespace": ns, "name": name, "managedFields": []any{map[string]any{"manager": "kubectl"}},
		"annotations": map[string]any{"kubectl.kubernetes.io/last-applied-configuration": "{}"}}
	if labels != nil {
		md["labels"] = labels
	}
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Service", "metadata": md, "spec": map[string]any{"type": "ClusterIP"}}}
}

// collect reads events until Initialized (inclusive) and returns the
// changes before it.
func collect(t *testing.T, events <-chan controller.Event) []controller.Change {
	t.Helper()
	var out []controller.Change
	timeout := time.After(10 * time.Second)
	for {
		select {
		case ev := <-events:
			if ev.Initialized {
				return out
			}
			out = append(out, ev.Changes...)
		case <-timeout:
			t.Fatalf("no Initialized event; changes so far %v", out)
		}
	}
}

func next(t *testing.T, events <-chan controller.Event) controller.Change {
	t.Helper()
	select {
	case ev := <-events:
		if len(ev.Changes) != 1 {
			t.Fatalf("event %+v, want one change", ev)
		}
		return ev.Changes[0]
	case <-time.After(10 * time.Second):
		t.Fatal("no change")
	}
	return controller.Change{}
}

func TestSourceListsEverythingBeforeInitializedAndTrimsObjects(t *testing.T) {
	scheme := runtime.NewScheme()
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(scheme, map[schema.GroupVersionResource]string{servicesGVR: "ServiceList"},
		unstructuredService("a", "one", map[string]any{"team": "web"}), unstructuredService("b", "two", map[string]any{"team": "web"}),
		unstructuredService("b", "other", map[string]any{"team": "db"}))
	src, err := NewSource(SourceConfig{Client: dyn, Watches: []Watch{{Alias: "services", APIVersion: "v1", Resource: "services", LabelSelector: "team=web", FieldSelector: "metadata.name!=two"}}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	events := make(chan controller.Event, 16)
	done := make(chan error, 1)
	go func() { done <- src.Run(ctx, events) }()
	initial := collect(t, events)
	got := map[string]bool{}
	for _, c := range initial {
		got[c.String()] = true
		if c.Object != nil {
			md := c.Object["metadata"].(map[string]any)
			if _, ok := md["managedFields"]; ok {
				t.Errorf("%s keeps managedFields", c)
			}
			if _, ok := md["annotations"]; ok {
				t.Errorf("%s keeps the last-applied annotation", c)
			}
		}
	}
	want := map[string]bool{"upsert services a/one": true, "delete services b/two": true}
	if len(got) != len(want) || !got["upsert services a/one"] || !got["delete services b/two"] {
		t.Errorf("initial changes %v, want %v (other is filtered server-side, two client-side)", got, want)
	}

	if _, err := dyn.Resource(servicesGVR).Namespace("c").Create(ctx, unstructuredService("c", "three", map[string]any{"team": "web"}), metav1CreateOptions()); err != nil {
		t.Fatal(err)
	}
	if c := next(t, events); c.String() != "upsert services c/three" {
		t.Errorf("after a create: %s", c)
	}
	if err := dyn.Resource(servicesGVR).Namespace("a").Delete(ctx, "one", metav1DeleteOptions()); err != nil {
		t.Fatal(err)
	}
	if c := next(t, events); c.String() != "delete services a/one" {
		t.Errorf("after a delete: %s", c)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Run returned %v, want context.Canceled", err)
	}
}

func TestNewSourceRefusesBadWatches(t *testing.T) {
	dyn := dynamicfake.NewSimpleDynamicClient(runtime.NewScheme())
	for name, w := range map[string]Watch{
		"no resource":    {Alias: "x", APIVersion: "v1"},
		"bad version":    {Alias: "x", APIVersion: "a/b/c", Resource: "things"},
		"bad labels":     {Alias: "x", APIVersion: "v1", Resource: "services", LabelSelector: "a in (b"},
		"bad field path": {Alias: "x", APIVersion: "v1", Resource: "services", FieldSelector: "a..b=c"},
	} {
		if _, err := NewSource(SourceConfig{Client: dyn, Watches: []Watch{w}}); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestHandlerDebounceSendsTheFirstChangeAndBatchesTheRest(t *testing.T) {
	events := make(chan controller.Event, 8)
	h := &handler{alias: "ingresses", events: events, ctx: context.Background(), hold: 300 * time.Millisecond}
	obj := func(name, rv string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"namespace": "a", "name": name, "resourceVersion": rv}}}
	}
	h.OnAdd(obj("listed", "1"), true) // the listing is never held
	if ev := <-events; len(ev.Changes) != 1 || ev.Changes[0].Name != "listed" {
		t.Fatalf("listing: %+v", ev)
	}
	h.listed()
	h.OnAdd(obj("x", "2"), false) // leading edge: at once
	if ev := <-events; len(ev.Changes) != 1 || ev.Changes[0].Name != "x" {
		t.Fatalf("leading edge: %+v", ev)
	}
	h.OnUpdate(nil, obj("y", "3"))
	h.OnUpdate(nil, obj("y", "4"))
	h.OnDelete(obj("x", "2"))
	ev := <-events
	if len(ev.Changes) != 2 || ev.Changes[0].String() != "delete ingresses a/x" || ev.Changes[1].String() != "upsert ingresses a/y" {
		t.Fatalf("held changes %v, want one event: delete a/x, upsert a/y", ev.Changes)
	}
	if rv := ev.Changes[1].Object["metadata"].(map[string]any)["resourceVersion"]; rv != "4" {
		t.Errorf("held update carries resourceVersion %v, want the latest, 4", rv)
	}
	select {
	case ev := <-events:
		t.Errorf("an extra event %+v", ev)
	case <-time.After(400 * time.Millisecond):
	}
}

func TestSourceObjectsShareTheValuesTheyHoldEqual(t *testing.T) {
	scheme := runtime.NewScheme()
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(scheme, map[schema.GroupVersionResource]string{servicesGVR: "ServiceList"},
		unstructuredService("a", "one", map[string]any{"team": "web"}), unstructuredService("b", "two", map[string]any{"team": "web"}))
	src, err := NewSource(SourceConfig{Client: dyn, Watches: []Watch{{Alias: "services", APIVersion: "v1", Resource: "services"}}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	events := make(chan controller.Event, 16)
	go func() { _ = src.Run(ctx, events) }()
	initial := collect(t, events)
	if len(initial) != 2 || initial[0].Object == nil || initial[1].Object == nil {
		t.Fatalf("initial changes %v, want two objects", initial)
	}
	a, b := initial[0].Object, initial[1].Object
	if !samePointer(a["spec"], b["spec"]) {
		t.Error("the two equal specs are two instances")
	}
	labelsA := a["metadata"].(map[string]any)["labels"]
	labelsB := b["metadata"].(map[string]any)["labels"]
	if !samePointer(labelsA, labelsB) {
		t.Error("the two equal label sets are two instances")
	}
	if samePointer(a["metadata"], b["metadata"]) {
		t.Error("two objects share their metadata")
	}
}
