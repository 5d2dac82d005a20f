package agentapi_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/haptic-io/haptic/agentapi"
	"github.com/haptic-io/haptic/renderplan"
)

func fullState() *agentapi.State {
	return &agentapi.State{
		APIVersion:          agentapi.APIVersion,
		AgentVersion:        "v0.1.0",
		OpKinds:             agentapi.OpKinds(),
		HAProxyVersion:      "3.4.7-1",
		Worker:              agentapi.Worker{PID: 4242, StartedAt: time.Date(2026, 11, 29, 11, 0, 0, 0, time.UTC)},
		AppliedPlanID:       "plan-1",
		LastKnownGoodPlanID: "plan-0",
		Fence:               6,
		Files:               map[string]renderplan.Digest{"haproxy.cfg": renderplan.DigestString("x")},
		PendingDeletes:      []agentapi.PendingDelete{{Backend: "be_old", Server: "pod-z"}, {Backend: "be_gone"}},
		Drifted:             true,
		LastApply:           fullResult(),
	}
}

func fullResult() *agentapi.ApplyResult {
	return &agentapi.ApplyResult{
		PlanID: "plan-1",
		OK:     true,
		Ops: []agentapi.OpResult{
			{Index: 0, Op: "server.add be_api/pod-a addr=10.0.0.7 port=8080 weight=1", OK: true},
			{Index: 1, Op: "map.set maps/hosts.map key=api.example.com value=be_api", OK: true, Reply: "ok"},
		},
		Reload:   agentapi.ReloadInfo{Performed: true, OK: true, Reason: "verdict reload", Took: 120 * time.Millisecond, NewWorkerPID: 4243},
		Rollback: agentapi.RollbackInfo{},
		Timings:  map[agentapi.Stage]time.Duration{agentapi.StageFiles: 3 * time.Millisecond, agentapi.StageReload: 120 * time.Millisecond},
		Took:     130 * time.Millisecond,
	}
}

func TestClientStateRoundTripsEveryField(t *testing.T) {
	fake := &fakeApplier{state: fullState()}
	c, tr, _ := testServer(t, fake, agentapi.HandlerOptions{})
	got, err := c.State(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(fullState(), got); diff != "" {
		t.Errorf("state (-want +got):\n%s", diff)
	}
	if tr.last() != http.StatusOK {
		t.Errorf("status = %d, want 200", tr.last())
	}
}

func TestClientApplyDeliversManifestAndBodies(t *testing.T) {
	fake := &fakeApplier{result: fullResult()}
	c, _, _ := testServer(t, fake, agentapi.HandlerOptions{})
	req := validRequest()
	got, err := c.Apply(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(fullResult(), got); diff != "" {
		t.Errorf("result (-want +got):\n%s", diff)
	}
	if len(fake.applies) != 1 {
		t.Fatalf("applier called %d times, want 1", len(fake.applies))
	}
	if diff := cmp.Diff(req, fake.applies[0]); diff != "" {
		t.Errorf("request seen by the applier (-want +got):\n%s", diff)
	}
}

func TestClientApplyWithoutBodiesSendsTheManifestOnly(t *testing.T) {
	fake := &fakeApplier{result: &agentapi.ApplyResult{PlanID: "plan-2", OK: true}}
	c, _, _ := testServer(t, fake, agentapi.HandlerOptions{})
	req := validRequest()
	req.Bodies = nil
	if _, err := c.Apply(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(req, fake.applies[0], cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("request seen by the applier (-want +got):\n%s", diff)
	}
}

func TestClientApplyRevertLKGNeedsNoFiles(t *testing.T) {
	fake := &fakeApplier{result: &agentapi.ApplyResult{PlanID: "plan-0", OK: true}}
	c, _, _ := testServer(t, fake, agentapi.HandlerOptions{})
	req := &agentapi.ApplyRequest{Mode: agentapi.ModeRevertLKG, ExpectedPlanID: "plan-2", Fence: 8}
	if _, err := c.Apply(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(req, fake.applies[0], cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("request seen by the applier (-want +got):\n%s", diff)
	}
}

func TestEveryNackStageComesBackAsNackError(t *testing.T) {
	for _, stage := range agentapi.Stages() {
		t.Run(string(stage), func(t *testing.T) {
			res := &agentapi.ApplyResult{
				PlanID: "plan-2", Stage: stage, Message: "No such server.",
				Ops:      []agentapi.OpResult{{Index: 0, Op: "server.add be_api/pod-a", OK: true}, {Index: 1, Op: "map.set", OK: false, Reply: "No such server."}},
				Rollback: agentapi.RollbackInfo{Performed: true, OK: true},
			}
			want := &agentapi.NackError{Stage: stage, Op: 1, Message: "No such server.\n[ALERT] raw reply", Result: res}
			fake := &fakeApplier{applyErr: want, result: res}
			c, tr, _ := testServer(t, fake, agentapi.HandlerOptions{})

			gotRes, err := c.Apply(context.Background(), validRequest())
			var nack *agentapi.NackError
			if !errors.As(err, &nack) {
				t.Fatalf("error %v (%T) is not a *NackError", err, err)
			}
			if diff := cmp.Diff(want, nack); diff != "" {
				t.Errorf("nack (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(res, gotRes); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
			if tr.last() != want.HTTPStatus() {
				t.Errorf("status = %d, want %d", tr.last(), want.HTTPStatus())
			}
			if errors.Is(err, agentapi.ErrUnsupported) {
				t.Errorf("a plain nack matches ErrUnsupported")
			}
		})
	}
}

func TestStaleFenceIsAConflict(t *testing.T) {
	fake := &fakeApplier{applyErr: &agentapi.NackError{Stage: agentapi.StageFence, Op: -1, Message: "fence 7 is older than 9"}}
	c, tr, _ := testServer(t, fake, agentapi.HandlerOptions{})
	_, err := c.Apply(context.Background(), validRequest())
	var nack *agentapi.NackError
	if !errors.As(err, &nack) || nack.Stage != agentapi.StageFence || nack.Op != -1 {
		t.Fatalf("error = %v, want a fence nack without op", err)
	}
	if tr.last() != http.StatusConflict {
		t.Errorf("status = %d, want 409", tr.last())
	}
}

func TestApplierResultNotOKIsANack(t *testing.T) {
	res := &agentapi.ApplyResult{PlanID: "plan-2", Stage: agentapi.StageOps, Message: "Unknown backend.", Ops: []agentapi.OpResult{{Index: 0, OK: false, Reply: "Unknown backend."}}}
	fake := &fakeApplier{result: res}
	c, _, _ := testServer(t, fake, agentapi.HandlerOptions{})
	_, err := c.Apply(context.Background(), validRequest())
	want := &agentapi.NackError{Stage: agentapi.StageOps, Op: 0, Message: "Unknown backend.", Result: res}
	var nack *agentapi.NackError
	if !errors.As(err, &nack) {
		t.Fatalf("error %v is not a *NackError", err)
	}
	if diff := cmp.Diff(want, nack); diff != "" {
		t.Errorf("nack (-want +got):\n%s", diff)
	}
}

func TestApplierPlainErrorIsAStatusError(t *testing.T) {
	fake := &fakeApplier{applyErr: errors.New("agent is shutting down"), stateErr: errors.New("haproxy socket: connection refused")}
	c, _, _ := testServer(t, fake, agentapi.HandlerOptions{})
	_, err := c.Apply(context.Background(), validRequest())
	var se *agentapi.StatusError
	if !errors.As(err, &se) || se.Code != http.StatusInternalServerError || se.Message != "agent is shutting down" {
		t.Errorf("apply error = %v, want a 500 StatusError with the applier's message", err)
	}
	_, err = c.State(context.Background())
	if !errors.As(err, &se) || se.Code != http.StatusInternalServerError || se.Message != "haproxy socket: connection refused" {
		t.Errorf("state error = %v, want a 500 StatusError with the applier's message", err)
	}
}

func TestStateFromANewerAgentDropsUnknownOpKinds(t *testing.T) {
	var s agentapi.State
	err := s.UnmarshalJSON([]byte(`{"apiVersion":"haptic.agent/v2","opKinds":["server.add","server.teleport","map.set"],"newField":{"x":1}}`))
	if err != nil {
		t.Fatal(err)
	}
	want := agentapi.State{APIVersion: "haptic.agent/v2", OpKinds: []agentapi.OpKind{agentapi.OpAddServer, agentapi.OpSetMapEntry}}
	if diff := cmp.Diff(want, s); diff != "" {
		t.Errorf("state (-want +got):\n%s", diff)
	}
	if !s.Supports(agentapi.OpSetMapEntry) || s.Supports(agentapi.OpDelBackend) {
		t.Errorf("Supports disagrees with OpKinds %v", s.OpKinds)
	}
}

func TestClientWithoutBaseURLFails(t *testing.T) {
	c := &agentapi.Client{}
	if _, err := c.State(context.Background()); err == nil {
		t.Fatal("State without BaseURL succeeded")
	}
}

func TestStateThatDoesNotEncodeIsAServerError(t *testing.T) {
	fake := &fakeApplier{state: &agentapi.State{OpKinds: []agentapi.OpKind{agentapi.OpKind(999)}}}
	c, _, _ := testServer(t, fake, agentapi.HandlerOptions{})
	_, err := c.State(context.Background())
	var se *agentapi.StatusError
	if !errors.As(err, &se) || se.Code != http.StatusInternalServerError {
		t.Fatalf("error = %v, want a 500 StatusError", err)
	}
}
