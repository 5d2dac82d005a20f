package agentapi_test

import (
	"context"
	"encoding/json"
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
// haproxy.cfg body, 3,000 listed files without bodies); "routeadd" is a
// route add on a 3,000-backend tree (haproxy.cfg and two of three maps
// sent, about 720 KiB of bodies, seven ops), sent framed, as multipart
// (the format before) and as patches.
func BenchmarkApplyRoundTrip(b *testing.B) {
	b.Run("runtime", func(b *testing.B) { benchApply(b, validRequest(), false) })
	b.Run("routeadd", func(b *testing.B) { benchApply(b, routeAddRequest(3000), false) })
	b.Run("routeadd-multipart", func(b *testing.B) { benchApply(b, routeAddRequest(3000), true) })
	b.Run("routeadd-patches", func(b *testing.B) {
		// The same change as patches of the tree before the route.
		before, after := routeAddRequest(2999), routeAddRequest(3000)
		for p, body := range after.Bodies {
			base := before.Bodies[p]
			pt, ok := agentapi.MakePatch(renderplan.DigestOf(base), base, body)
			if !ok {
				b.Fatalf("no patch for %s", p)
			}
			if after.Patches == nil {
				after.Patches = map[string]agentapi.Patch{}
			}
			after.Patches[p] = pt
			delete(after.Bodies, p)
		}
		benchApply(b, after, false)
	})
	b.Run("reload", func(b *testing.B) { benchApply(b, bigRequest(3000), false) })
	b.Run("reload-multipart", func(b *testing.B) { benchApply(b, bigRequest(3000), true) })
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

// routeAddRequest is the request of a route add on a tree of backends
// dynamic backends: haproxy.cfg and the host and prefix maps change, the
// exact map does not.
func routeAddRequest(backends int) *agentapi.ApplyRequest {
	var cfg, hosts, prefix, exact strings.Builder
	cfg.WriteString("global\n    stats socket /run/haproxy.sock mode 600 level admin\n\ndefaults base\n    mode http\n")
	for i := range backends + 1 {
		fmt.Fprintf(&cfg, "backend be_bench_r%04d_80 from haptic-be-0123456789abcdef\n    guid bench:r%04d:80\n    server bench-r%04d-pod 10.0.%d.%d:8080 weight 1 check inter 2s\n\n", i, i, i, i/256, i%256)
		fmt.Fprintf(&hosts, "r%04d.bench.example.com r%04d.bench.example.com\n", i, i)
		fmt.Fprintf(&prefix, "r%04d.bench.example.com/ be_bench_r%04d_80\n", i, i)
		fmt.Fprintf(&exact, "r%04d.bench.example.com/healthz be_bench_r%04d_80\n", i, i)
	}
	be := fmt.Sprintf("be_bench_r%04d_80", backends)
	host := fmt.Sprintf("r%04d.bench.example.com", backends)
	req := &agentapi.ApplyRequest{PlanID: "plan-add", ExpectedPlanID: "plan-prev", Fence: 9, Verdict: agentapi.VerdictRuntime,
		Files: []renderplan.File{
			manifestFile(renderplan.ConfigPath, renderplan.FileConfig, cfg.String()),
			manifestFile("maps/hosts.map", renderplan.FileMap, hosts.String()),
			manifestFile("maps/paths-exact.map", renderplan.FileMap, exact.String()),
			manifestFile("maps/paths-prefix.map", renderplan.FileMap, prefix.String()),
		},
		Ops: []agentapi.Op{
			{Kind: agentapi.OpAddBackend, Backend: be, Profile: "haptic-be-0123456789abcdef", Mode: "http", GUID: "bench:r:80"},
			{Kind: agentapi.OpAddServer, Backend: be, Server: "bench-pod", Address: "10.0.0.7", Port: 8080, Weight: 1},
			{Kind: agentapi.OpEnableHealth, Backend: be, Server: "bench-pod"},
			{Kind: agentapi.OpPublishBackend, Backend: be},
			{Kind: agentapi.OpAddMapEntry, Map: "maps/hosts.map", Key: host, Value: host},
			{Kind: agentapi.OpAddMapEntry, Map: "maps/paths-prefix.map", Key: host + "/", Value: be},
		},
		Bodies: map[string][]byte{
			renderplan.ConfigPath:   []byte(cfg.String()),
			"maps/hosts.map":        []byte(hosts.String()),
			"maps/paths-prefix.map": []byte(prefix.String()),
		},
	}
	return req
}

// benchApply measures req's round trip; multipart sends it as
// multipart/form-data (the format before the framed one), by serving the
// handler behind an agent that refuses the framed format once.
func benchApply(b *testing.B, req *agentapi.ApplyRequest, multipart bool) {
	fake := &fakeApplier{result: &agentapi.ApplyResult{PlanID: req.PlanID, OK: true}}
	h := agentapi.NewHandler(noopApplier{fake}, agentapi.HandlerOptions{Token: testToken})
	if multipart {
		h = &oldAgent{h: h}
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	c := &agentapi.Client{BaseURL: srv.URL, Token: testToken}
	ctx := context.Background()
	if _, err := c.Apply(ctx, req); err != nil {
		b.Fatal(err)
	}
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

// BenchmarkDecodeManifestRouteAdd measures the agent's decode of a route
// add's manifest (its file list and seven ops), which it reads before
// anything else.
func BenchmarkDecodeManifestRouteAdd(b *testing.B) {
	manifest, err := json.Marshal(routeAddRequest(3000))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := agentapi.DecodeManifest(manifest, agentapi.Limits{}); err != nil {
			b.Fatal(err)
		}
	}
}
