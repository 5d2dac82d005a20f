package agentapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"slices"
	"strings"
	"testing"

	"github.com/haptic-io/haptic/agentapi"
	"github.com/haptic-io/haptic/renderplan"
)

// fuzzBoundary is the multipart boundary of FuzzHandlerApply's bodies.
const fuzzBoundary = "hapticfuzzboundary"

// FuzzHandlerApply sends raw request bodies through the handler (without
// a network): it never panics, answers every request with a status and a
// JSON body, and calls the Applier only with a request that passes
// [agentapi.ApplyRequest.Validate], whose bodies all match their digests.
func FuzzHandlerApply(f *testing.F) {
	f.Add(fuzzBody(f, validRequest()))
	bad := validRequest()
	bad.Bodies["../x"] = []byte("x")
	f.Add(fuzzBody(f, bad))
	h := func(fake agentapi.Applier) http.Handler {
		return agentapi.NewHandler(fake, agentapi.HandlerOptions{Token: testToken,
			Limits: agentapi.Limits{MaxBodyBytes: 1 << 20, MaxFiles: 32, MaxOps: 32}})
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var got *agentapi.ApplyRequest
		fake := applyFunc(func(req *agentapi.ApplyRequest) {
			got = req
		})
		r := httptest.NewRequest(http.MethodPost, agentapi.PathApply, bytes.NewReader(body))
		r.Header.Set("Authorization", "Bearer "+string(testToken))
		r.Header.Set("Content-Type", "multipart/form-data; boundary="+fuzzBoundary)
		w := httptest.NewRecorder()
		h(fake).ServeHTTP(w, r)
		checkHandlerAnswer(t, w, got)
	})
}

// FuzzHandlerApplyFramed is FuzzHandlerApply for the framed format
// (agentapi.ContentTypeApply), with the request's length known or not
// (chunked), so that both ways of reading a body run.
func FuzzHandlerApplyFramed(f *testing.F) {
	f.Add(framedRequestBody(f, validRequest()), false)
	f.Add(framedRequestBody(f, validRequest()), true)
	h := func(fake agentapi.Applier) http.Handler {
		return agentapi.NewHandler(fake, agentapi.HandlerOptions{Token: testToken,
			Limits: agentapi.Limits{MaxBodyBytes: 1 << 20, MaxFiles: 32, MaxOps: 32}})
	}
	f.Fuzz(func(t *testing.T, body []byte, chunked bool) {
		var got *agentapi.ApplyRequest
		fake := applyFunc(func(req *agentapi.ApplyRequest) {
			got = req
		})
		var rd io.Reader = bytes.NewReader(body)
		if chunked {
			rd = io.MultiReader(rd) // hides the length
		}
		r := httptest.NewRequest(http.MethodPost, agentapi.PathApply, rd)
		r.Header.Set("Authorization", "Bearer "+string(testToken))
		r.Header.Set("Content-Type", agentapi.ContentTypeApply)
		w := httptest.NewRecorder()
		h(fake).ServeHTTP(w, r)
		checkHandlerAnswer(t, w, got)
	})
}

// checkHandlerAnswer checks what the handler did with a fuzzed request:
// a JSON answer, 200 only after calling the applier, and an applier
// called only with a request that validates, whose bodies match their
// digests.
func checkHandlerAnswer(t *testing.T, w *httptest.ResponseRecorder, got *agentapi.ApplyRequest) {
	t.Helper()
	if !json.Valid(w.Body.Bytes()) {
		t.Fatalf("status %d with a body that is not JSON: %q", w.Code, w.Body.Bytes())
	}
	if got == nil {
		if w.Code == http.StatusOK {
			t.Fatalf("200 without calling the applier")
		}
		return
	}
	if err := got.Validate(agentapi.Limits{}); err != nil {
		t.Fatalf("applier called with a request that does not validate: %v", err)
	}
	for p, b := range got.Bodies {
		if err := agentapi.ValidatePath(p); err != nil {
			t.Fatalf("applier got a body for a bad path: %v", err)
		}
		var want renderplan.Digest
		for _, f := range got.Files {
			if f.Path == p {
				want = f.Digest
			}
		}
		if renderplan.DigestOf(b) != want {
			t.Fatalf("body %q does not match its digest", p)
		}
	}
}

// applyFunc is an Applier whose Apply calls a func and acknowledges.
type applyFunc func(*agentapi.ApplyRequest)

func (f applyFunc) State(context.Context) (*agentapi.State, error) { return &agentapi.State{}, nil }
func (f applyFunc) Apply(_ context.Context, req *agentapi.ApplyRequest) (*agentapi.ApplyResult, error) {
	f(req)
	return &agentapi.ApplyResult{PlanID: req.PlanID, OK: true}, nil
}

// fuzzBody encodes req as a multipart body with fuzzBoundary.
func fuzzBody(tb testing.TB, req *agentapi.ApplyRequest) []byte {
	tb.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	if err := mw.SetBoundary(fuzzBoundary); err != nil {
		tb.Fatal(err)
	}
	m, err := json.Marshal(req)
	if err != nil {
		tb.Fatal(err)
	}
	parts := []rawPart{{agentapi.ManifestPart, string(m)}}
	for _, f := range req.Files {
		if b, ok := req.Bodies[f.Path]; ok {
			parts = append(parts, rawPart{f.Path, string(b)})
		}
	}
	for p, b := range req.Bodies {
		if _, listed := indexOf(req.Files, p); !listed {
			parts = append(parts, rawPart{p, string(b)})
		}
	}
	for _, p := range parts {
		h := make(textproto.MIMEHeader)
		h.Set("Content-Disposition", fmt.Sprintf("form-data; name=%q", p.name))
		w, err := mw.CreatePart(h)
		if err != nil {
			tb.Fatal(err)
		}
		_, _ = w.Write([]byte(p.body))
	}
	if err := mw.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

func indexOf(files []renderplan.File, p string) (int, bool) {
	for i, f := range files {
		if f.Path == p {
			return i, true
		}
	}
	return -1, false
}

// framedRequestBody encodes req in the framed format, as the Client
// does: the bodies of listed files in path order.
func framedRequestBody(tb testing.TB, req *agentapi.ApplyRequest) []byte {
	tb.Helper()
	m, err := json.Marshal(req)
	if err != nil {
		tb.Fatal(err)
	}
	var parts []rawPart
	for p, b := range req.Bodies {
		parts = append(parts, rawPart{p, string(b)})
	}
	slices.SortFunc(parts, func(a, b rawPart) int { return strings.Compare(a.name, b.name) })
	return framed(string(m), parts...)
}

// framed builds a raw framed body: the length line, the manifest, then
// each part as its name, a newline and its body.
func framed(manifest string, parts ...rawPart) []byte {
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "%d\n%s", len(manifest), manifest)
	for _, p := range parts {
		buf.WriteString(p.name + "\n" + p.body)
	}
	return buf.Bytes()
}
