package controller

import (
	"strings"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/haptic-io/haptic/templating"
)

// TestRenderInputRendersOneSliceAndTagsItsPlan: the loop hands each
// render the ExtraContext of Config.RenderInput (here: which route this
// loop serves, as one loop per Gateway does) and keeps the tag with the
// plan ID, so that the plan a pod runs tells what it was rendered from.
func TestRenderInputRendersOneSliceAndTagsItsPlan(t *testing.T) {
	cfg := strings.Replace(testConfig, "{{- range .resources.routes.List }}",
		`{{- range .resources.routes.List }}{{ if eq .metadata.name $.extraContext.only }}`, 1)
	cfg = strings.Replace(cfg, "    {{- end }}\n", "    {{- end }}{{ end }}\n", 1)
	parsed, err := templating.ParseConfig([]byte(cfg))
	if err != nil {
		t.Fatal(err)
	}
	engine, err := templating.Compile(parsed)
	if err != nil {
		t.Fatal(err)
	}
	src, agent := newChanSource(), newFakeAgent()
	var dispatched atomic.Int32
	l, err := New(Config{
		Source:  src,
		Engine:  engine,
		Targets: func() []Target { return []Target{{Name: "haproxy-0", Agent: agent}} },
		RenderInput: func(snap templating.Store) RenderInput {
			// The tag is what the render read: how many routes it saw.
			return RenderInput{ExtraContext: map[string]any{"only": "b"}, Tag: len(snap.List("routes"))}
		},
		Dispatched: func() { dispatched.Add(1) },
		Log:        testLogger(t),
		Registerer: prometheus.NewRegistry(),
	})
	if err != nil {
		t.Fatal(err)
	}
	runLoop(t, l)
	src.send(t, Event{Changes: []Change{upsert(route("a", "a.example", "127.0.0.1", 9001)), upsert(route("b", "b.example", "127.0.0.1", 9002))}, Initialized: true})
	first := agent.next(t)
	if got, want := hostsMap(first), "b.example be_b\n"; got != want {
		t.Errorf("hosts.map = %q, want %q (route b alone, as the render input says)", got, want)
	}
	if tag, ok := l.PlanTag(first.PlanID); !ok || tag != 2 {
		t.Errorf("PlanTag(%s) = %v, %v; want 2 (the render saw two routes)", first.PlanID, tag, ok)
	}
	eventually(t, "Dispatched called after the dispatch", func() bool { return dispatched.Load() >= 1 })

	// A third route renders the same plan (b alone): the ID keeps the
	// newest tag.
	src.send(t, Event{Changes: []Change{upsert(route("c", "c.example", "127.0.0.1", 9003))}})
	eventually(t, "the third route rendered", func() bool {
		tag, _ := l.PlanTag(first.PlanID)
		return tag == 3
	})
	if _, ok := l.PlanTag("no-such-plan"); ok {
		t.Error("PlanTag of an unknown plan: ok, want not found")
	}
	agent.none(t)
}

func TestPlanTagsForgetTheOldestBeyondTheirBound(t *testing.T) {
	var tags planTags
	for i := range maxPlanTags + 3 {
		tags.set(string(rune('A'+i)), i)
	}
	if _, ok := tags.get("A"); ok {
		t.Error("the oldest tag is still known")
	}
	if v, ok := tags.get(string(rune('A' + maxPlanTags + 2))); !ok || v != maxPlanTags+2 {
		t.Errorf("newest tag = %v, %v", v, ok)
	}
	tags.set(string(rune('A'+maxPlanTags+2)), -1)
	if v, _ := tags.get(string(rune('A' + maxPlanTags + 2))); v != -1 {
		t.Errorf("re-set tag = %v, want -1", v)
	}
}

// TestStatusSaysWhichPodsWaitForAScheduledReload: a pod whose agent
// deferred the reload its plan needs is listed in ReloadPending until a
// reconciliation reads that the reload ran.
func TestStatusSaysWhichPodsWaitForAScheduledReload(t *testing.T) {
	src, agent := newChanSource(), newFakeAgent()
	agent.pace = true
	l, err := New(Config{
		Source:     src,
		Engine:     testEngine(t),
		Targets:    func() []Target { return []Target{{Name: "haproxy-0", Agent: agent}} },
		Log:        testLogger(t),
		Registerer: prometheus.NewRegistry(),
	})
	if err != nil {
		t.Fatal(err)
	}
	runLoop(t, l)
	src.send(t, Event{Changes: []Change{upsert(route("a", "a.example", "127.0.0.1", 9001))}, Initialized: true})
	first := agent.next(t)
	eventually(t, "the pod listed as waiting for its reload", func() bool {
		st := l.Status()
		return st.Pods["haproxy-0"] == first.PlanID && st.ReloadPending["haproxy-0"]
	})
	agent.reloaded()
	l.Trigger()
	eventually(t, "the pod no longer waiting", func() bool { return !l.Status().ReloadPending["haproxy-0"] })
}
