package agent_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/haptic-io/haptic/agentapi"
	"github.com/haptic-io/haptic/internal/haproxytest"
	"github.com/haptic-io/haptic/renderplan"
)

// withPatches turns every body of req whose file prev has into a patch
// of prev's file, where one pays; it fails the test when none does.
func withPatches(t testing.TB, req *agentapi.ApplyRequest, prev *renderplan.Output) {
	t.Helper()
	for _, f := range prev.Files {
		body, ok := req.Bodies[f.Path]
		if !ok {
			continue
		}
		if pt, ok := agentapi.MakePatch(renderplan.DigestOf(f.Body), f.Body, body); ok {
			if req.Patches == nil {
				req.Patches = map[string]agentapi.Patch{}
			}
			req.Patches[f.Path] = pt
			delete(req.Bodies, f.Path)
		}
	}
	if len(req.Patches) == 0 {
		t.Fatal("no body of the request is worth a patch")
	}
}

// patchSite starts a site with 100 routes applied and returns the world,
// its output and an HTTP client on an agent.
func patchSite(t *testing.T) (*site, world, *renderplan.Output, *agentapi.Client, *haproxytest.Echo) {
	s := startSite(t, "3.4")
	echo := haproxytest.StartEcho(t, "pod")
	a := s.newAgent(t, nil)
	srv := serve(t, a, agentapi.Limits{})
	c := &agentapi.Client{BaseURL: srv.URL, Token: testToken}
	w := world{paths: true}
	for i := range 100 {
		w.routes = append(w.routes, routeAt(i, echo))
	}
	prev := s.build(t, w)
	if _, err := c.Apply(context.Background(), fullRequest(prev, 1)); err != nil {
		t.Fatal(err)
	}
	return s, w, prev, c, echo
}

func TestARouteAddSentAsPatchesServesAndLeavesTheNewTree(t *testing.T) {
	s, w, prev, c, echo := patchSite(t)
	st, err := c.State(context.Background())
	if err != nil || !st.BodyPatches {
		t.Fatalf("state %+v, %v: want BodyPatches", st, err)
	}
	r := routeAt(100, echo)
	w.routes = append(w.routes, r)
	next := s.build(t, w)
	req, d := diffRequest(t, s, prev, next, 2)
	if d.Verdict != "runtime" {
		t.Fatalf("verdict %s, want runtime", d.Verdict)
	}
	withPatches(t, req, prev)
	res, err := c.Apply(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if res.Reload.Performed {
		t.Errorf("the apply reloaded: %+v", res.Reload)
	}
	if diff := cmp.Diff(outFiles(next), treeFiles(t, s.dir)); diff != "" {
		t.Errorf("tree (-want +got):\n%s", diff)
	}
	if code, _ := s.get(t, r.host); code != 200 {
		t.Errorf("GET %s = %d, want 200", r.host, code)
	}
}

func TestAPatchThatDoesNotRebuildTheFileIsRefusedAndChangesNothing(t *testing.T) {
	cases := map[string]func(pt *agentapi.Patch){
		"another base": func(pt *agentapi.Patch) { pt.Base = renderplan.DigestString("another file") },
		"a wrong literal": func(pt *agentapi.Patch) {
			pt.Literal = append([]byte{}, pt.Literal...)
			pt.Literal[0] ^= 1
		},
	}
	for name, mutate := range cases {
		t.Run(name, func(t *testing.T) {
			s, w, prev, c, echo := patchSite(t)
			w.routes = append(w.routes, routeAt(100, echo))
			next := s.build(t, w)
			req, _ := diffRequest(t, s, prev, next, 2)
			withPatches(t, req, prev)
			pt := req.Patches[renderplan.ConfigPath]
			mutate(&pt)
			req.Patches[renderplan.ConfigPath] = pt
			reloads := s.reloads(t)
			_, err := c.Apply(context.Background(), req)
			if nack := nackStage(t, err); nack.Stage != agentapi.StageFiles {
				t.Fatalf("NACK at %s (%s), want %s", nack.Stage, nack.Message, agentapi.StageFiles)
			} else {
				t.Logf("nack: %s", nack.Message)
			}
			if diff := cmp.Diff(outFiles(prev), treeFiles(t, s.dir)); diff != "" {
				t.Errorf("tree changed (-want +got):\n%s", diff)
			}
			if got := s.reloads(t); got != reloads {
				t.Errorf("reloads %d → %d, want none", reloads, got)
			}
			// No op ran, so no ops mark is left to cost a reload at the
			// next start.
			if opsMarkLeft(t, s.dir) {
				t.Error("the refused apply left its ops mark")
			}
			// The same change with its bodies goes through.
			full, _ := diffRequest(t, s, prev, next, 3)
			if _, err := c.Apply(context.Background(), full); err != nil {
				t.Fatalf("the bodies after the refused patch: %v", err)
			}
			if diff := cmp.Diff(outFiles(next), treeFiles(t, s.dir)); diff != "" {
				t.Errorf("tree (-want +got):\n%s", diff)
			}
		})
	}
}

// TestAPatchAgainstAFileChangedOnDiskIsRefused: the agent keeps the
// bodies it wrote to rebuild patched files without reading them, but only
// while the file on disk is still the one it wrote.
func TestAPatchAgainstAFileChangedOnDiskIsRefused(t *testing.T) {
	s, w, prev, c, echo := patchSite(t)
	w.routes = append(w.routes, routeAt(100, echo))
	next := s.build(t, w)
	req, _ := diffRequest(t, s, prev, next, 2)
	withPatches(t, req, prev)
	cfg := filepath.Join(s.dir, "haproxy.cfg")
	edited := outFiles(prev)["haproxy.cfg"] + "# edited by hand\n"
	if err := os.WriteFile(cfg, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := c.Apply(context.Background(), req)
	if nack := nackStage(t, err); nack.Stage != agentapi.StageFiles || !strings.Contains(nack.Message, "the disk has") {
		t.Fatalf("NACK at %s (%s), want %s naming the file on disk", nack.Stage, nack.Message, agentapi.StageFiles)
	}
	if got := treeFiles(t, s.dir)["haproxy.cfg"]; got != edited {
		t.Error("haproxy.cfg changed after the refused patch")
	}
}
