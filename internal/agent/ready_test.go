package agent_test

import (
	"context"
	"testing"

	"github.com/haptic-io/haptic/internal/agent"
	"github.com/haptic-io/haptic/internal/haproxytest"
	"github.com/haptic-io/haptic/renderplan"
)

// TestReadyAfterPlanWaitsForTheFirstPlan: on the bootstrap config an
// agent is ready at once, one with ReadyAfterPlan only once a plan is
// applied.
func TestReadyAfterPlanWaitsForTheFirstPlan(t *testing.T) {
	ctx := context.Background()
	s := startSite(t, "3.4")
	plain, err := agent.New(s.config(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := plain.Ready(ctx); err != nil {
		t.Errorf("without ReadyAfterPlan on the bootstrap config: %v, want ready", err)
	}
	_ = plain.Close() // the tree's lock, for the next agent
	a := s.newAgent(t, func(c *agent.Config) { c.ReadyAfterPlan = true })
	if err := a.Ready(ctx); err == nil {
		t.Fatal("with ReadyAfterPlan on the bootstrap config: ready, want not ready")
	} else {
		t.Logf("not ready: %v", err)
	}
	echo := haproxytest.StartEcho(t, "api-a")
	out := s.build(t, world{routes: []route{{"api.example.com", "be_api", []renderplan.Server{server("api-a", echo)}}}})
	mustApply(t, a, fullRequest(out, 1))
	if err := a.Ready(ctx); err != nil {
		t.Fatalf("with ReadyAfterPlan after a plan: %v, want ready", err)
	}
}
