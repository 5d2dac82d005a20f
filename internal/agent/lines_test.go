package agent_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/haptic-io/haptic/agentapi"
	"github.com/haptic-io/haptic/deployplan"
	"github.com/haptic-io/haptic/internal/haproxytest"
	"github.com/haptic-io/haptic/renderplan"
)

// withFile returns req with the file at path (of kind) set to body: a
// body of its own, or a patch when patch is set (it then applies to
// base), and the manifest's digest and size to match. renderplan never
// builds such a file; a request built by hand can.
func withFile(req *agentapi.ApplyRequest, path string, kind renderplan.FileKind, base, body []byte, patch bool) *agentapi.ApplyRequest {
	r := *req
	r.Files = slices.Clone(req.Files)
	r.Bodies = map[string][]byte{}
	for p, b := range req.Bodies {
		if p != path {
			r.Bodies[p] = b
		}
	}
	f := renderplan.File{Path: path, Kind: kind, Digest: renderplan.DigestOf(body), Size: len(body)}
	if i := slices.IndexFunc(r.Files, func(f renderplan.File) bool { return f.Path == path }); i >= 0 {
		r.Files[i] = f
	} else {
		r.Files = append(r.Files, f)
		slices.SortFunc(r.Files, func(a, b renderplan.File) int { return strings.Compare(a.Path, b.Path) })
	}
	if patch {
		r.Patches = map[string]agentapi.Patch{path: {Base: renderplan.DigestOf(base), Prefix: len(base), Literal: body[len(base):]}}
	} else {
		r.Bodies[path] = body
	}
	return &r
}

// TestALineHAProxyWouldCutIsRefusedWithItsFileAndLine: a map line longer
// than a runtime command (HAProxy would read it cut in two at the reload
// that follows the refused op) or a crt-list line as long is refused
// before any op runs or any file is written, and the NACK names the file
// and the line, whether the file comes whole or as a patch.
func TestALineHAProxyWouldCutIsRefusedWithItsFileAndLine(t *testing.T) {
	s := startSite(t, "3.4")
	api, shop := haproxytest.StartEcho(t, "api-a"), haproxytest.StartEcho(t, "shop-a")
	a := s.newAgent(t, nil)
	w := world{routes: []route{{"api.example.com", "be_api", []renderplan.Server{server("api-a", api)}}}}
	prev := s.build(t, w)
	mustApply(t, a, fullRequest(prev, 1))
	w.routes = append(w.routes, route{"shop.example.com", "be_shop", []renderplan.Server{server("shop-a", shop)}})
	next := s.build(t, w)
	req, d := diffRequest(t, s, prev, next, 2)
	if d.Verdict != deployplan.VerdictRuntime {
		t.Fatalf("verdict %s, want runtime", d.Verdict)
	}
	hosts := []byte(outFiles(next)["maps/hosts.map"])
	long := append(slices.Clone(hosts), strings.Repeat("a", 16370)+"victim.example.com be_shop\n"...)
	base := []byte(outFiles(prev)["maps/hosts.map"])
	patched := append(slices.Clone(base), strings.Repeat("a", 16370)+"victim.example.com be_shop\n"...)
	reloads := s.reloads(t)
	for _, tt := range []struct {
		name string
		req  *agentapi.ApplyRequest
		want string
	}{
		{"a map body", withFile(req, "maps/hosts.map", renderplan.FileMap, nil, long, false),
			"file maps/hosts.map: line 3 makes a line of 16437 bytes with the runtime command that carries it, more than the 12288 allowed with tune.bufsize 16384"},
		{"a map patch", withFile(req, "maps/hosts.map", renderplan.FileMap, base, patched, true), "file maps/hosts.map: line 2 makes a line of"},
		{"a crt-list body", withFile(req, "certs/crt-list.txt", renderplan.FileCrtList, nil, []byte("certs/a.pem "+strings.Repeat("h.example.com ", 1000)+"\n"), false),
			"file certs/crt-list.txt: line 1 makes a line of"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			_, err := a.Apply(ctx, tt.req)
			nack := nackStage(t, err)
			if nack.Stage != agentapi.StageFiles || !strings.Contains(nack.Message, tt.want) {
				t.Fatalf("NACK %s %q, want stage files and %q", nack.Stage, nack.Message, tt.want)
			}
			if diff := cmp.Diff(outFiles(prev), treeFiles(t, s.dir)); diff != "" {
				t.Errorf("the tree changed (-want +got):\n%s", diff)
			}
			if status, _ := s.get(t, "shop.example.com"); status != 404 {
				t.Errorf("shop.example.com answers %d: the ops ran", status)
			}
			if got := s.reloads(t); got != reloads {
				t.Errorf("reloads %d → %d, want none", reloads, got)
			}
		})
	}
	// The same request with the files renderplan built goes through.
	mustApply(t, a, req)
	if status, body := s.get(t, "shop.example.com"); status != 200 || body != "shop-a\n" {
		t.Errorf("shop.example.com = %d %q after the good apply", status, body)
	}

	// An entry that counts exactly MaxLine goes through at runtime: its
	// command fits in what the socket client sends, no fallback reload.
	key := strings.Repeat("k", renderplan.MaxLine(0)-renderplan.MapLineLen("maps/hosts.map", "", "be_big"))
	if n := renderplan.MapLineLen("maps/hosts.map", key, "be_big"); n != renderplan.MaxLine(0) {
		t.Fatalf("the entry counts %d", n)
	}
	w.routes = append(w.routes, route{key, "be_big", []renderplan.Server{server("big-a", shop)}})
	big := s.build(t, w)
	req, d = diffRequest(t, s, next, big, 3)
	if d.Verdict != deployplan.VerdictRuntime {
		t.Fatalf("verdict %s, want runtime", d.Verdict)
	}
	if res := mustApply(t, a, req); res.Reload.Performed {
		t.Errorf("the longest entry took a reload: %+v", res.Reload)
	}
	if got := s.cmd(t, "get map maps/hosts.map "+key); !strings.Contains(got, `value="be_big"`) {
		t.Errorf("get map of the longest key: %.120q", got)
	}
}
