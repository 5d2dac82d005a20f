package agentapi_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"sync"
	"testing"
	"time"

	"github.com/haptic-io/haptic/agentapi"
	"github.com/haptic-io/haptic/renderplan"
)

// testToken is the bearer token of the test servers.
const testToken agentapi.Token = "test-token-0123456789abcdef"

// fakeApplier records the calls it gets and answers with canned values.
type fakeApplier struct {
	mu       sync.Mutex
	states   int
	applies  []*agentapi.ApplyRequest
	state    *agentapi.State
	stateErr error
	result   *agentapi.ApplyResult
	applyErr error
	readyErr error
}

func (f *fakeApplier) State(context.Context) (*agentapi.State, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.states++
	return f.state, f.stateErr
}

func (f *fakeApplier) Apply(_ context.Context, req *agentapi.ApplyRequest) (*agentapi.ApplyResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.applies = append(f.applies, req)
	return f.result, f.applyErr
}

func (f *fakeApplier) Ready(context.Context) error { return f.readyErr }

// calls returns how often State and Apply were called.
func (f *fakeApplier) calls() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.states + len(f.applies)
}

var _ agentapi.Applier = (*fakeApplier)(nil)

// statusTransport records the status code of every response and may
// replace each request's body before it is sent.
type statusTransport struct {
	mu       sync.Mutex
	statuses []int
	// rewrite, when set, replaces the request body and content type.
	rewrite func() (body []byte, contentType string)
}

func (s *statusTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if s.rewrite != nil {
		body, ct := s.rewrite()
		if r.Body != nil {
			_ = r.Body.Close()
		}
		r = r.Clone(r.Context())
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		r.Header.Set("Content-Type", ct)
	}
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err == nil {
		s.mu.Lock()
		s.statuses = append(s.statuses, resp.StatusCode)
		s.mu.Unlock()
	}
	return resp, err
}

// last returns the last recorded status, or 0.
func (s *statusTransport) last() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.statuses) == 0 {
		return 0
	}
	return s.statuses[len(s.statuses)-1]
}

// testServer serves fake with o (the test token unless o sets one) and
// returns a Client for it and the transport that records statuses.
func testServer(t *testing.T, fake agentapi.Applier, o agentapi.HandlerOptions) (*agentapi.Client, *statusTransport, *httptest.Server) {
	t.Helper()
	if o.Token == "" && !o.AllowNoToken {
		o.Token = testToken
	}
	if o.Log == nil {
		o.Log = testLogger(t)
	}
	srv := httptest.NewServer(agentapi.NewHandler(fake, o))
	t.Cleanup(srv.Close)
	tr := &statusTransport{}
	c := &agentapi.Client{BaseURL: srv.URL, Token: testToken, HTTPClient: &http.Client{Transport: tr}, Timeout: 30 * time.Second}
	return c, tr, srv
}

// testServerFor serves h (already configured) and returns a Client for
// it with the test token.
func testServerFor(t *testing.T, h http.Handler) (*agentapi.Client, *statusTransport, *httptest.Server) {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	tr := &statusTransport{}
	c := &agentapi.Client{BaseURL: srv.URL, Token: testToken, HTTPClient: &http.Client{Transport: tr}, Timeout: 30 * time.Second}
	return c, tr, srv
}

// testLogger writes through t.Log.
func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(tLogWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type tLogWriter struct{ t *testing.T }

func (w tLogWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(string(bytes.TrimRight(p, "\n")))
	return len(p), nil
}

// file returns the manifest entry of body at path p.
func manifestFile(p string, kind renderplan.FileKind, body string) renderplan.File {
	return renderplan.File{Path: p, Kind: kind, Digest: renderplan.DigestString(body), Size: len(body)}
}

// validRequest returns a request that the handler accepts: three files,
// two with bodies, and two ops.
func validRequest() *agentapi.ApplyRequest {
	cfg := "global\n  master-worker\n"
	hosts := "api.example.com be_api\n"
	return &agentapi.ApplyRequest{
		PlanID:         "plan-2",
		ExpectedPlanID: "plan-1",
		Fence:          7,
		Mode:           agentapi.ModeAuto,
		Verdict:        agentapi.VerdictRuntime,
		Files: []renderplan.File{
			manifestFile("certs/api.pem", renderplan.FileCert, "unchanged pem"),
			manifestFile(renderplan.ConfigPath, renderplan.FileConfig, cfg),
			manifestFile("maps/hosts.map", renderplan.FileMap, hosts),
		},
		Ops: []agentapi.Op{
			{Kind: agentapi.OpAddServer, Backend: "be_api", Server: "pod-a", Address: "10.0.0.7", Port: 8080, Weight: 1},
			{Kind: agentapi.OpSetMapEntry, Map: "maps/hosts.map", Key: "api.example.com", Value: "be_api"},
		},
		Bodies: map[string][]byte{
			renderplan.ConfigPath: []byte(cfg),
			"maps/hosts.map":      []byte(hosts),
		},
	}
}

// rawPart is one raw multipart part.
type rawPart struct{ name, body string }

// multipartBody builds a raw apply body: the parts in order, the first
// usually the manifest.
func multipartBody(t *testing.T, parts ...rawPart) ([]byte, string) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for _, p := range parts {
		h := make(textproto.MIMEHeader)
		h.Set("Content-Disposition", mime.FormatMediaType("form-data", map[string]string{"name": p.name}))
		w, err := mw.CreatePart(h)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.WriteString(w, p.body); err != nil {
			t.Fatal(err)
		}
	}
	if err := mw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), mw.FormDataContentType()
}
