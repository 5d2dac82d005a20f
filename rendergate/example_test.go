package rendergate_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/haptic-io/haptic/rendergate"
	"github.com/haptic-io/haptic/renderplan"
)

// The gate on its own: optimistic until a refusal, which reverts the pods
// running the refused plan and latches the gate until a plan passes.
func ExampleGate() {
	g, err := rendergate.NewGate(rendergate.GateConfig{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("plan A: %+v\n", g.Admit("A"))
	pods := []rendergate.PodState{{Pod: "haproxy-0", AppliedPlanID: "A"}, {Pod: "haproxy-1", AppliedPlanID: "A"}}
	fmt.Println("A refused, reverts:", g.Record("A", rendergate.VerdictRefused, pods))
	fmt.Println("latched:", g.Latched())
	fmt.Printf("plan B: %+v\n", g.Admit("B"))
	g.Record("B", rendergate.VerdictPass, nil)
	fmt.Println("B passed, latched:", g.Latched())
	// Output:
	// plan A: {Dispatch:true Validate:true Verdict:unknown Reason:optimistic: dispatch now, validate in the background}
	// A refused, reverts: [{haproxy-0 A revert_lkg} {haproxy-1 A revert_lkg}]
	// latched: true
	// plan B: {Dispatch:false Validate:true Verdict:unknown Reason:latched by refused plan A: validate before dispatch}
	// B passed, latched: false
}

// A controller loop: the gate decides, a Runner checks in the background
// on its own goroutine and hands results back. The checker here is a
// renderplan.CheckerFunc standing in for a HAProxyChecker.
func ExampleRunner() {
	checker := renderplan.CheckerFunc(func(ctx context.Context, out *renderplan.Output) error {
		if bytes.Contains(out.Files[0].Body, []byte("bogus")) {
			return &rendergate.CheckError{PlanID: out.Plan.ID(), ExitCode: 1, Reason: "unknown keyword 'bogus'"}
		}
		return nil
	})
	results := make(chan rendergate.Result)
	runner, err := rendergate.NewRunner(rendergate.RunnerConfig{Checker: checker, OnResult: func(r rendergate.Result) { results <- r }})
	if err != nil {
		log.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- runner.Run(ctx) }()

	gate, err := rendergate.NewGate(rendergate.GateConfig{})
	if err != nil {
		log.Fatal(err)
	}
	applied := map[string]string{} // pod → applied plan ID
	name := map[string]string{}    // plan ID → name, for printing
	for _, r := range []struct{ name, cfg string }{
		{"good", "global\n    maxconn 100\n"},
		{"bad", "global\n    bogus 1\n"},
		{"fixed", "global\n    maxconn 200\n"},
	} {
		b := renderplan.NewBuilder()
		b.Text(r.cfg)
		out, err := b.Build()
		if err != nil {
			log.Fatal(err)
		}
		id := out.Plan.ID()
		name[id] = r.name
		d := gate.Admit(id)
		if d.Dispatch {
			applied["haproxy-0"] = id // dispatch: the pod applies the plan
		}
		if !d.Validate {
			continue
		}
		runner.Submit(out)
		res := <-results
		var pods []rendergate.PodState
		for pod, plan := range applied {
			pods = append(pods, rendergate.PodState{Pod: pod, AppliedPlanID: plan})
		}
		reverts := gate.Record(res.PlanID, res.Verdict, pods)
		fmt.Printf("%s: dispatched=%v verdict=%v reverts=%d latched=%v\n", r.name, d.Dispatch, res.Verdict, len(reverts), gate.Latched())
		if res.Verdict == rendergate.VerdictPass && !d.Dispatch {
			applied["haproxy-0"] = id // validated first, dispatched now
		}
	}
	fmt.Println("haproxy-0 runs:", name[applied["haproxy-0"]])
	cancel()
	fmt.Println("runner:", <-done)
	// Output:
	// good: dispatched=true verdict=pass reverts=0 latched=false
	// bad: dispatched=true verdict=refused reverts=1 latched=true
	// fixed: dispatched=false verdict=pass reverts=0 latched=false
	// haproxy-0 runs: fixed
	// runner: context canceled
}

// Checking a rendered output with the real haproxy, and telling a refusal
// from a checker that could not run.
func ExampleHAProxyChecker() {
	checker, err := rendergate.NewHAProxyChecker(rendergate.Config{
		Binary:  "haproxy",
		Timeout: 5 * time.Second,
	})
	if err != nil {
		log.Fatal(err)
	}
	b := renderplan.NewBuilder()
	b.Text("global\n    bogus_keyword 1\n")
	out, err := b.Build()
	if err != nil {
		log.Fatal(err)
	}
	err = checker.Check(context.Background(), out)
	var refused *rendergate.CheckError
	switch {
	case err == nil:
		fmt.Println("pass")
	case errors.As(err, &refused):
		fmt.Println("refused:", refused.Reason) // refused: config : parsing [haproxy.cfg:2] : unknown keyword 'bogus_keyword' in 'global' section
		for _, a := range refused.Alerts {
			fmt.Println(a)
		}
	default:
		fmt.Println("could not check:", err)
	}
}
