package agent_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/haptic-io/haptic/agentapi"
	"github.com/haptic-io/haptic/internal/agent"
	"github.com/haptic-io/haptic/internal/haproxytest"
	"github.com/haptic-io/haptic/renderplan"
)

const testToken = agentapi.Token("test-token-0123456789abcdef")

// serve exposes a through agentapi.NewHandler on a loopback test server.
func serve(t testing.TB, a *agent.Agent, limits agentapi.Limits) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(agentapi.NewHandler(a, agentapi.HandlerOptions{Token: testToken, Limits: limits, Log: testLogger(t)}))
	t.Cleanup(srv.Close)
	return srv
}

// TestHTTPWithoutTheRightTokenIsUnauthorizedAndDoesNothing is test 8:
// through the real handler and client, end to end with the agent.
func TestHTTPWithoutTheRightTokenIsUnauthorizedAndDoesNothing(t *testing.T) {
	s := startSite(t, "3.4")
	echo := haproxytest.StartEcho(t, "api-a")
	a := s.newAgent(t, nil)
	srv := serve(t, a, agentapi.Limits{})
	out := s.build(t, world{routes: []route{{"api.example.com", "be_api", []renderplan.Server{server("api-a", echo)}}}})
	before := treeFiles(t, s.dir)
	reloads := s.reloads(t)
	for name, tok := range map[string]agentapi.Token{"no token": "", "wrong token": "wrong-token-0123456789abcdef"} {
		t.Run(name, func(t *testing.T) {
			c := &agentapi.Client{BaseURL: srv.URL, Token: tok, Retries: -1}
			_, err := c.Apply(context.Background(), fullRequest(out, 1))
			if !errors.Is(err, agentapi.ErrUnauthorized) {
				t.Fatalf("apply: %v, want ErrUnauthorized", err)
			}
			if _, err := c.State(context.Background()); !errors.Is(err, agentapi.ErrUnauthorized) {
				t.Fatalf("state: %v, want ErrUnauthorized", err)
			}
		})
	}
	if diff := cmp.Diff(before, treeFiles(t, s.dir)); diff != "" {
		t.Errorf("the tree changed (-before +after):\n%s", diff)
	}
	if got := s.reloads(t); got != reloads {
		t.Errorf("reloads %d → %d, want none", reloads, got)
	}
	// The right token works, and a NACK comes back typed.
	c := &agentapi.Client{BaseURL: srv.URL, Token: testToken}
	if res, err := c.Apply(context.Background(), fullRequest(out, 1)); err != nil || !res.OK {
		t.Fatalf("apply with the token: %+v, %v", res, err)
	}
	if code, _ := s.get(t, "api.example.com"); code != 200 {
		t.Errorf("GET = %d, want 200", code)
	}
	st, err := c.State(context.Background())
	if err != nil || st.AppliedPlanID != out.Plan.ID() {
		t.Fatalf("state over HTTP: %+v, %v", st, err)
	}
	_, err = c.Apply(context.Background(), fullRequest(out, 0))
	var nack *agentapi.NackError
	if !errors.As(err, &nack) || nack.Stage != agentapi.StageFence {
		t.Errorf("stale apply over HTTP: %v, want a fence NackError", err)
	}
}

// rawApply posts a hand-made multipart apply: the manifest JSON, then
// bodies (path, content).
func rawApply(t testing.TB, url, manifest string, bodies ...[2]string) (int, string) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	pw, _ := mw.CreateFormField(agentapi.ManifestPart)
	_, _ = pw.Write([]byte(manifest))
	for _, b := range bodies {
		pw, _ := mw.CreateFormField(b[0])
		_, _ = pw.Write([]byte(b[1]))
	}
	_ = mw.Close()
	req, _ := http.NewRequest(http.MethodPost, url+agentapi.PathApply, &buf)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Authorization", "Bearer "+string(testToken))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func fileJSON(path, body string) string {
	return fmt.Sprintf(`{"path":%q,"kind":"general","digest":%q,"size":%d}`, path, renderplan.DigestOf([]byte(body)), len(body))
}

// TestHTTPHostileInputIsRefusedWithoutWriting is test 9.
func TestHTTPHostileInputIsRefusedWithoutWriting(t *testing.T) {
	s := startSite(t, "3.4")
	echo := haproxytest.StartEcho(t, "api-a")
	a := s.newAgent(t, nil)
	srv := serve(t, a, agentapi.Limits{MaxBodyBytes: 64 << 10})
	out := s.build(t, world{routes: []route{{"api.example.com", "be_api", []renderplan.Server{server("api-a", echo)}}}})
	mustApply(t, a, fullRequest(out, 1))
	before := treeFiles(t, s.dir)
	cfg := string(out.Files[0].Body)
	cfgFile := fmt.Sprintf(`{"path":"haproxy.cfg","kind":"config","digest":%q,"size":%d}`, renderplan.DigestOf([]byte(cfg)), len(cfg))
	manifest := func(files, ops string) string {
		return fmt.Sprintf(`{"planID":"p2","fence":2,"verdict":"runtime","files":[%s%s],"ops":[%s]}`, cfgFile, files, ops)
	}
	big := strings.Repeat("x", 70<<10)
	cases := []struct {
		name     string
		manifest string
		bodies   [][2]string
	}{
		{"path traversal", manifest(","+fileJSON("../evil", "x"), ""), [][2]string{{"../evil", "x"}}},
		{"traversal inside a managed dir", manifest(","+fileJSON("maps/../../evil", "x"), ""), [][2]string{{"maps/../../evil", "x"}}},
		{"absolute path", manifest(","+fileJSON("/etc/evil", "x"), ""), nil},
		{"path outside the managed tree", manifest(","+fileJSON("evil.cfg", "x"), ""), [][2]string{{"evil.cfg", "x"}}},
		{"hidden path into the state dir", manifest(","+fileJSON("general/.haptic/state.json", "x"), ""), [][2]string{{"general/.haptic/state.json", "x"}}},
		{"oversized body", manifest(","+fileJSON("general/big", big), ""), [][2]string{{"general/big", big}}},
		{"malformed manifest", `{"planID":"p2","files":[`, nil},
		{"digest mismatch", manifest(","+fileJSON("general/a", "x"), ""), [][2]string{{"general/a", "y"}}},
		{"unknown op kind", manifest("", `{"kind":"server.explode","backend":"be_api","server":"a"}`), nil},
		{"semicolon in a server name", manifest("", `{"kind":"server.set_weight","backend":"be_api","server":"a;del server be_api/api-a","weight":1}`), nil},
		{"newline in a map key", manifest("", `{"kind":"map.add","map":"maps/hosts.map","key":"a\nshow info","value":"be_api"}`), nil},
		{"payload marker in a map value", manifest("", `{"kind":"map.set","map":"maps/hosts.map","key":"a","value":"<<"}`), nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, body := rawApply(t, srv.URL, c.manifest, c.bodies...)
			t.Logf("status %d: %s", code, body)
			if code < 400 || code > 499 {
				t.Fatalf("status %d (%s), want 4xx", code, body)
			}
			if diff := cmp.Diff(before, treeFiles(t, s.dir)); diff != "" {
				t.Errorf("the tree changed (-before +after):\n%s", diff)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(s.dir), "evil")); err == nil {
		t.Errorf("a file escaped the base directory")
	}
	if code, body := s.get(t, "api.example.com"); code != 200 || body != "api-a\n" {
		t.Errorf("GET = %d %q, want 200 api-a", code, body)
	}
}

// TestSymlinkEscapeIsRefusedAtWriteTime replaces maps/ with a symlink to
// a directory outside the base: the apply is refused at the files stage
// and nothing is written outside.
func TestSymlinkEscapeIsRefusedAtWriteTime(t *testing.T) {
	s := startSite(t, "3.4")
	echo := haproxytest.StartEcho(t, "api-a")
	a := s.newAgent(t, nil)
	w := world{routes: []route{{"api.example.com", "be_api", []renderplan.Server{server("api-a", echo)}}}}
	first := s.build(t, w)
	mustApply(t, a, fullRequest(first, 1))
	outside := t.TempDir()
	if err := os.RemoveAll(filepath.Join(s.dir, "maps")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(s.dir, "maps")); err != nil {
		t.Fatal(err)
	}
	w.routes[0].host = "other.example.com"
	next := s.build(t, w)
	_, err := a.Apply(context.Background(), fullRequest(next, 2))
	nack := nackStage(t, err)
	if nack.Stage != agentapi.StageFiles || !strings.Contains(nack.Message, "unsafe") && !strings.Contains(nack.Message, "escape") {
		t.Fatalf("nack %+v, want a files-stage refusal of the symlink", nack)
	}
	entries, _ := os.ReadDir(outside)
	if len(entries) != 0 {
		t.Errorf("files were written through the symlink: %v", entries)
	}
}
