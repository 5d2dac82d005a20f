package agentapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/haptic-io/haptic/agentapi"
	"github.com/haptic-io/haptic/renderplan"
)

func TestRequestsWithoutTheTokenAreUnauthorizedAndNotServed(t *testing.T) {
	for name, tok := range map[string]agentapi.Token{
		"no token":     "",
		"wrong token":  "wrong-token-0123456789abcdef",
		"token prefix": testToken[:len(testToken)-1],
	} {
		t.Run(name, func(t *testing.T) {
			fake := &fakeApplier{state: fullState(), result: fullResult()}
			c, tr, _ := testServer(t, fake, agentapi.HandlerOptions{})
			c.Token = tok
			_, err := c.State(context.Background())
			if !errors.Is(err, agentapi.ErrUnauthorized) {
				t.Errorf("State error = %v, want ErrUnauthorized", err)
			}
			_, err = c.Apply(context.Background(), validRequest())
			if !errors.Is(err, agentapi.ErrUnauthorized) {
				t.Errorf("Apply error = %v, want ErrUnauthorized", err)
			}
			if tr.last() != http.StatusUnauthorized {
				t.Errorf("status = %d, want 401", tr.last())
			}
			if n := fake.calls(); n != 0 {
				t.Errorf("applier called %d times, want 0", n)
			}
		})
	}
}

func TestHandlerWithoutTokenRefusesUnlessAllowed(t *testing.T) {
	fake := &fakeApplier{state: fullState()}
	srv := agentapi.NewHandler(fake, agentapi.HandlerOptions{Log: testLogger(t)})
	c, _, _ := testServerFor(t, srv)
	if _, err := c.State(context.Background()); !errors.Is(err, agentapi.ErrUnauthorized) {
		t.Errorf("State without a configured token: error = %v, want ErrUnauthorized", err)
	}
	open, _, _ := testServer(t, fake, agentapi.HandlerOptions{AllowNoToken: true})
	open.Token = ""
	if _, err := open.State(context.Background()); err != nil {
		t.Errorf("State with AllowNoToken: %v", err)
	}
	if fake.calls() != 1 {
		t.Errorf("applier called %d times, want 1", fake.calls())
	}
}

func TestOversizedRequestIsRefusedWith413(t *testing.T) {
	for name, size := range map[string]int{"slightly": 8 << 10, "far": 16 << 20} {
		t.Run(name, func(t *testing.T) { testOversized(t, size) })
	}
}

func testOversized(t *testing.T, size int) {
	fake := &fakeApplier{result: fullResult()}
	c, tr, _ := testServer(t, fake, agentapi.HandlerOptions{Limits: agentapi.Limits{MaxBodyBytes: 4 << 10}})
	req := validRequest()
	big := strings.Repeat("x", size)
	req.Files = append(req.Files, manifestFile("general/big.http", renderplan.FileGeneral, big))
	req.Bodies["general/big.http"] = []byte(big)
	_, err := c.Apply(context.Background(), req)
	var nack *agentapi.NackError
	if !errors.As(err, &nack) || nack.Stage != agentapi.StageDecode {
		t.Fatalf("error = %v, want a decode nack", err)
	}
	if tr.last() != http.StatusRequestEntityTooLarge {
		t.Errorf("status = %d, want 413", tr.last())
	}
	if n := fake.calls(); n != 0 {
		t.Errorf("applier called %d times, want 0", n)
	}
}

func TestOversizedRequestWithContentLengthIsRefusedBeforeReading(t *testing.T) {
	fake := &fakeApplier{result: fullResult()}
	c, tr, _ := testServer(t, fake, agentapi.HandlerOptions{Limits: agentapi.Limits{MaxBodyBytes: 1 << 10}})
	tr.rewrite = func() ([]byte, string) {
		return multipartBody(t, rawPart{"manifest", "{}"}, rawPart{"haproxy.cfg", strings.Repeat("x", 4<<10)})
	}
	_, err := c.Apply(context.Background(), validRequest())
	var nack *agentapi.NackError
	if !errors.As(err, &nack) || nack.Stage != agentapi.StageDecode || tr.last() != http.StatusRequestEntityTooLarge {
		t.Fatalf("error = %v, status %d; want a decode nack and 413", err, tr.last())
	}
	if n := fake.calls(); n != 0 {
		t.Errorf("applier called %d times, want 0", n)
	}
}

func TestTooManyOpsOrFilesAreRefused(t *testing.T) {
	fake := &fakeApplier{result: fullResult()}
	c, tr, _ := testServer(t, fake, agentapi.HandlerOptions{Limits: agentapi.Limits{MaxOps: 1, MaxFiles: 2}})
	req := validRequest()
	_, err := c.Apply(context.Background(), req)
	if !isDecodeNack(err) || tr.last() != http.StatusBadRequest {
		t.Fatalf("error = %v, status %d; want a decode nack and 400", err, tr.last())
	}
	if n := fake.calls(); n != 0 {
		t.Errorf("applier called %d times, want 0", n)
	}
}

func TestBadRequestsAreRefusedWith400AndNothingIsApplied(t *testing.T) {
	cases := map[string]func(r *agentapi.ApplyRequest){
		"path traversal": func(r *agentapi.ApplyRequest) { r.Files[0].Path = "../etc/passwd" },
		"inner dot-dot":  func(r *agentapi.ApplyRequest) { r.Files[0].Path = "maps/../../x" },
		"absolute path":  func(r *agentapi.ApplyRequest) { r.Files[0].Path = "/etc/haproxy/x.pem" },
		"NUL in path":    func(r *agentapi.ApplyRequest) { r.Files[0].Path = "certs/a\x00.pem" },
		"newline in path": func(r *agentapi.ApplyRequest) {
			r.Files[0].Path = "certs/a\r\nX-Evil: 1"
		},
		"backslash in path": func(r *agentapi.ApplyRequest) { r.Files[0].Path = `certs\a.pem` },
		"unclean path":      func(r *agentapi.ApplyRequest) { r.Files[0].Path = "certs//a.pem" },
		"duplicate path": func(r *agentapi.ApplyRequest) {
			r.Files = append(r.Files, r.Files[1])
		},
		"body for an unlisted path": func(r *agentapi.ApplyRequest) {
			r.Bodies["maps/other.map"] = []byte("x y\n")
		},
		"body for a traversal path": func(r *agentapi.ApplyRequest) {
			r.Bodies["../../root/.ssh/authorized_keys"] = []byte("ssh-ed25519 AAAA")
		},
		"digest mismatch": func(r *agentapi.ApplyRequest) {
			r.Bodies["maps/hosts.map"] = []byte("api.example.com be_evil\n")
		},
		"size mismatch": func(r *agentapi.ApplyRequest) {
			r.Bodies["maps/hosts.map"] = append(r.Bodies["maps/hosts.map"], '\n')
		},
		"malformed digest": func(r *agentapi.ApplyRequest) { r.Files[0].Digest = "XYZ" },
		"no haproxy.cfg": func(r *agentapi.ApplyRequest) {
			r.Files = r.Files[2:]
			delete(r.Bodies, renderplan.ConfigPath)
		},
		"no plan ID":    func(r *agentapi.ApplyRequest) { r.PlanID = "" },
		"plan ID space": func(r *agentapi.ApplyRequest) { r.PlanID = "plan 2" },
		"invalid op": func(r *agentapi.ApplyRequest) {
			r.Ops[1].Key = "two words"
		},
		"op injecting a command": func(r *agentapi.ApplyRequest) {
			r.Ops[0].Server = "pod-a\nshutdown sessions"
		},
		"revert with files": func(r *agentapi.ApplyRequest) { r.Mode = agentapi.ModeRevertLKG },
	}
	for name, mutate := range cases {
		t.Run(name, func(t *testing.T) {
			fake := &fakeApplier{result: fullResult()}
			c, tr, _ := testServer(t, fake, agentapi.HandlerOptions{})
			req := validRequest()
			mutate(req)
			_, err := c.Apply(context.Background(), req)
			if !isDecodeNack(err) {
				t.Fatalf("error = %v, want a decode nack", err)
			}
			if errors.Is(err, agentapi.ErrUnsupported) {
				t.Errorf("error %v is marked unsupported", err)
			}
			if tr.last() != http.StatusBadRequest {
				t.Errorf("status = %d, want 400", tr.last())
			}
			if n := fake.calls(); n != 0 {
				t.Errorf("applier called %d times, want 0", n)
			}
			// The same request fails the same way in process.
			if err := req.Validate(agentapi.Limits{}); !isDecodeNack(err) {
				t.Errorf("Validate = %v, want a decode nack", err)
			}
		})
	}
}

func TestRawRequestsTheClientCannotMakeAreRefused(t *testing.T) {
	cfg := "global\n"
	manifest := fmt.Sprintf(`{"planID":"p","files":[{"path":"haproxy.cfg","kind":"config","digest":%q,"size":%d}]}`,
		renderplan.DigestString(cfg), len(cfg))
	cases := map[string]struct {
		parts       []rawPart
		contentType string
		status      int
		unsupported bool
	}{
		"accepted as a baseline": {parts: []rawPart{{"manifest", manifest}, {"haproxy.cfg", cfg}}, status: http.StatusOK},
		"body sent twice":        {parts: []rawPart{{"manifest", manifest}, {"haproxy.cfg", cfg}, {"haproxy.cfg", cfg}}, status: http.StatusBadRequest},
		"manifest not first":     {parts: []rawPart{{"haproxy.cfg", cfg}, {"manifest", manifest}}, status: http.StatusBadRequest},
		"no parts":               {status: http.StatusBadRequest},
		"manifest not JSON":      {parts: []rawPart{{"manifest", "planID: p"}}, status: http.StatusBadRequest},
		"trailing data":          {parts: []rawPart{{"manifest", manifest + "{}"}}, status: http.StatusBadRequest},
		"unknown manifest field": {
			parts:  []rawPart{{"manifest", strings.Replace(manifest, `"planID"`, `"priority":1,"planID"`, 1)}},
			status: http.StatusUnprocessableEntity, unsupported: true,
		},
		"unknown file field": {
			parts:  []rawPart{{"manifest", strings.Replace(manifest, `"kind":"config"`, `"kind":"config","mode":"0600"`, 1)}},
			status: http.StatusUnprocessableEntity, unsupported: true,
		},
		"unknown file kind": {
			parts:  []rawPart{{"manifest", strings.Replace(manifest, `"kind":"config"`, `"kind":"lua"`, 1)}},
			status: http.StatusUnprocessableEntity, unsupported: true,
		},
		"unknown op kind": {
			parts:  []rawPart{{"manifest", strings.Replace(manifest, `}]}`, `}],"ops":[{"kind":"backend.teleport","backend":"be"}]}`, 1)}},
			status: http.StatusUnprocessableEntity, unsupported: true,
		},
		"unknown op field": {
			parts:  []rawPart{{"manifest", strings.Replace(manifest, `}]}`, `}],"ops":[{"kind":"backend.publish","backend":"be","when":"now"}]}`, 1)}},
			status: http.StatusUnprocessableEntity, unsupported: true,
		},
		"unknown mode": {
			parts:  []rawPart{{"manifest", strings.Replace(manifest, `"planID"`, `"mode":"canary","planID"`, 1)}},
			status: http.StatusUnprocessableEntity, unsupported: true,
		},
		"unknown verdict": {
			parts:  []rawPart{{"manifest", strings.Replace(manifest, `"planID"`, `"verdict":"partial","planID"`, 1)}},
			status: http.StatusUnprocessableEntity, unsupported: true,
		},
		"op without kind": {
			parts:  []rawPart{{"manifest", strings.Replace(manifest, `}]}`, `}],"ops":[{"backend":"be"}]}`, 1)}},
			status: http.StatusBadRequest,
		},
		"multipart without a boundary": {
			parts: []rawPart{{"manifest", manifest}}, contentType: "multipart/form-data",
			status: http.StatusBadRequest,
		},
		"not multipart": {
			parts: []rawPart{{"manifest", manifest}}, contentType: "application/json",
			status: http.StatusUnsupportedMediaType, unsupported: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			fake := &fakeApplier{result: &agentapi.ApplyResult{PlanID: "p", OK: true}}
			c, tr, _ := testServer(t, fake, agentapi.HandlerOptions{})
			tr.rewrite = func() ([]byte, string) {
				body, ct := multipartBody(t, tc.parts...)
				if tc.contentType != "" {
					ct = tc.contentType
				}
				return body, ct
			}
			_, err := c.Apply(context.Background(), validRequest())
			if tr.last() != tc.status {
				t.Errorf("status = %d, want %d (error %v)", tr.last(), tc.status, err)
			}
			if tc.status == http.StatusOK {
				if err != nil || fake.calls() != 1 {
					t.Fatalf("error = %v, calls %d; want success", err, fake.calls())
				}
				return
			}
			if !isDecodeNack(err) {
				t.Fatalf("error = %v, want a decode nack", err)
			}
			if got := errors.Is(err, agentapi.ErrUnsupported); got != tc.unsupported {
				t.Errorf("errors.Is(err, ErrUnsupported) = %v, want %v (error %v)", got, tc.unsupported, err)
			}
			if n := fake.calls(); n != 0 {
				t.Errorf("applier called %d times, want 0", n)
			}
		})
	}
}

func TestUnknownOpKindNamesTheOp(t *testing.T) {
	cfg := "global\n"
	manifest := fmt.Sprintf(`{"planID":"p","files":[{"path":"haproxy.cfg","kind":"config","digest":%q,"size":%d}],
		"ops":[{"kind":"backend.publish","backend":"be"},{"kind":"backend.teleport","backend":"be"}]}`,
		renderplan.DigestString(cfg), len(cfg))
	fake := &fakeApplier{}
	c, tr, _ := testServer(t, fake, agentapi.HandlerOptions{})
	tr.rewrite = func() ([]byte, string) { return multipartBody(t, rawPart{"manifest", manifest}) }
	_, err := c.Apply(context.Background(), validRequest())
	var nack *agentapi.NackError
	if !errors.As(err, &nack) || !nack.Unsupported || nack.Stage != agentapi.StageDecode || nack.Op != 1 {
		t.Fatalf("error = %#v, want an unsupported decode nack for op 1", err)
	}
	if !strings.Contains(nack.Message, "backend.teleport") {
		t.Errorf("message %q does not name the kind", nack.Message)
	}
}

func TestProbesAndMetrics(t *testing.T) {
	metrics := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, "haptic_agent_up 1\n")
	})
	cases := []struct {
		name     string
		o        agentapi.HandlerOptions
		readyErr error
		path     string
		status   int
		body     string
	}{
		{name: "healthz", path: "/healthz", status: 200, body: "ok\n"},
		{name: "readyz when ready", path: "/readyz", status: 200, body: "ok\n"},
		{name: "readyz when not ready", readyErr: errors.New("haproxy not reachable"), path: "/readyz", status: 503, body: `"haproxy not reachable"`},
		{name: "metrics without a handler", path: "/metrics", status: 404},
		{name: "metrics with a handler", o: agentapi.HandlerOptions{Metrics: metrics}, path: "/metrics", status: 200, body: "haptic_agent_up 1\n"},
		{name: "unknown path", path: "/v2/state", status: 404},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fake := &fakeApplier{readyErr: tc.readyErr}
			_, _, srv := testServer(t, fake, tc.o)
			resp, err := http.Get(srv.URL + tc.path)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = resp.Body.Close() }()
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.status {
				t.Errorf("status = %d, want %d", resp.StatusCode, tc.status)
			}
			if !strings.Contains(string(b), tc.body) {
				t.Errorf("body %q does not contain %q", b, tc.body)
			}
			if fake.calls() != 0 {
				t.Errorf("applier called %d times, want 0", fake.calls())
			}
		})
	}
}

func TestWrongMethodIsRefused(t *testing.T) {
	fake := &fakeApplier{}
	_, _, srv := testServer(t, fake, agentapi.HandlerOptions{})
	resp, err := http.Get(srv.URL + agentapi.PathApply)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET /v1/apply status = %d, want 405", resp.StatusCode)
	}
}

func isDecodeNack(err error) bool {
	var nack *agentapi.NackError
	return errors.As(err, &nack) && nack.Stage == agentapi.StageDecode
}

func TestMultipartWithoutABoundaryIsRefusedForWhatItLacks(t *testing.T) {
	h := agentapi.NewHandler(&fakeApplier{}, agentapi.HandlerOptions{Token: testToken})
	r := httptest.NewRequest(http.MethodPost, agentapi.PathApply, strings.NewReader("--x\r\n"))
	r.Header.Set("Authorization", "Bearer "+string(testToken))
	r.Header.Set("Content-Type", "multipart/form-data")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	var eb struct{ Message string }
	if err := json.Unmarshal(w.Body.Bytes(), &eb); err != nil {
		t.Fatal(err)
	}
	if w.Code != http.StatusBadRequest || !strings.Contains(eb.Message, "no boundary") || strings.Contains(eb.Message, "neither") {
		t.Errorf("%d %q, want 400 saying the boundary is missing", w.Code, eb.Message)
	}
}
