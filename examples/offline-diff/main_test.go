package main

import (
	"strings"
	"testing"

	"github.com/haptic-io/haptic/agentapi"
	"github.com/haptic-io/haptic/deployplan"
)

// The kind of test a platform team writes: "adding a route and moving a
// pod must not reload HAProxy 3.4".
func TestAddingARouteAndMovingAPodDoesNotReloadOn34(t *testing.T) {
	today, tomorrow := ExampleRoutes()
	base, err := BuildPlan(today)
	if err != nil {
		t.Fatal(err)
	}
	next, err := BuildPlan(tomorrow)
	if err != nil {
		t.Fatal(err)
	}
	d := Decide(base, next, "3.4.7-1")
	if d.Verdict != deployplan.VerdictRuntime {
		t.Fatalf("verdict %s, want runtime:\n%s", d.Verdict, d)
	}
	// The new backend is published before the host map routes to it.
	publish, route := -1, -1
	for i, o := range d.Ops {
		switch {
		case o.Kind == agentapi.OpPublishBackend && o.Backend == "be_shop":
			publish = i
		case o.Kind == agentapi.OpAddMapEntry && o.Key == "shop.example.com":
			route = i
		}
	}
	if publish < 0 || route < 0 || publish > route {
		t.Errorf("publish at %d, map entry at %d; want the publish first:\n%s", publish, route, d)
	}
}

func TestAddingARouteReloadsBelow34(t *testing.T) {
	today, tomorrow := ExampleRoutes()
	base, _ := BuildPlan(today)
	next, _ := BuildPlan(tomorrow)
	for _, v := range []string{"3.0", "3.2"} {
		if d := Decide(base, next, v); d.Verdict != deployplan.VerdictReload {
			t.Errorf("HAProxy %s: verdict %s, want reload", v, d.Verdict)
		}
	}
}

func TestMovingAPodOnlyIsRuntimeOnEverySeries(t *testing.T) {
	today, _ := ExampleRoutes()
	moved := []Route{today[0]}
	moved[0].Endpoints = []Endpoint{today[0].Endpoints[0], {"api-7d9f-zzzzz", "10.0.0.99", 8080}}
	base, _ := BuildPlan(today)
	next, _ := BuildPlan(moved)
	for _, v := range []string{"3.0", "3.2", "3.4"} {
		if d := Decide(base, next, v); d.Verdict != deployplan.VerdictRuntime {
			t.Errorf("HAProxy %s: verdict %s, want runtime:\n%s", v, d.Verdict, d)
		}
	}
}

func TestRunPrintsTheDecision(t *testing.T) {
	var out strings.Builder
	if err := run(&out, []string{"-haproxy", "3.4"}); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.String(), "verdict runtime\n") {
		t.Errorf("output:\n%s", out.String())
	}
}
