package agentapi_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/haptic-io/haptic/agentapi"
	"github.com/haptic-io/haptic/renderplan"
)

// BenchmarkApplyRoundTrip measures one apply through the real Client and
// handler over loopback, with an Applier that does nothing: the wire
// contract's share of an apply. "runtime" is a map change (one changed
// map body, one op, 3 files); "reload" is a 3,000-backend tree (a 2 MiB
// haproxy.cfg body, 3,000 listed files without bodies).
func BenchmarkApplyRoundTrip(b *testing.B) {
	b.Run("runtime", func(b *testing.B) { benchApply(b, validRequest()) })
	b.Run("reload", func(b *testing.B) { benchApply(b, bigRequest(3000)) })
}

func bigRequest(backends int) *agentapi.ApplyRequest {
	var cfg strings.Builder
	for i := range backends {
		fmt.Fprintf(&cfg, "backend be_%05d\n  server pod-a 10.0.%d.%d:8080 weight 1\n", i, i/256, i%256)
	}
	for cfg.Len() < 2<<20 {
		cfg.WriteString("# padding to a realistic size for 3000 backends ..............\n")
	}
	body := []byte(cfg.String())
	req := &agentapi.ApplyRequest{PlanID: "plan-big", Fence: 1, Verdict: agentapi.VerdictReload,
		Files:  []renderplan.File{{Path: renderplan.ConfigPath, Kind: renderplan.FileConfig, Digest: renderplan.DigestOf(body), Size: len(body)}},
		Bodies: map[string][]byte{renderplan.ConfigPath: body}}
	for i := range backends {
		req.Files = append(req.Files, manifestFile(fmt.Sprintf("maps/m%05d.map", i), renderplan.FileMap, "k v\n"))
	}
	return req
}

func benchApply(b *testing.B, req *agentapi.ApplyRequest) {
	fake := &fakeApplier{result: &agentapi.ApplyResult{PlanID: req.PlanID, OK: true}}
	srv := httptest.NewServer(agentapi.NewHandler(noopApplier{fake}, agentapi.HandlerOptions{Token: testToken}))
	defer srv.Close()
	c := &agentapi.Client{BaseURL: srv.URL, Token: testToken}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Apply(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
}

// noopApplier answers every apply with the fake's result without
// recording the request.
type noopApplier struct{ f *fakeApplier }

func (n noopApplier) State(ctx context.Context) (*agentapi.State, error) { return n.f.State(ctx) }
func (n noopApplier) Apply(context.Context, *agentapi.ApplyRequest) (*agentapi.ApplyResult, error) {
	return n.f.result, nil
}
