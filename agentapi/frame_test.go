package agentapi_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/haptic-io/haptic/agentapi"
	"github.com/haptic-io/haptic/renderplan"
)

func TestFramedRequestsAreCheckedBeforeTheApplier(t *testing.T) {
	cfg := "global\n"
	manifest := fmt.Sprintf(`{"planID":"p","files":[{"path":"haproxy.cfg","kind":"config","digest":%q,"size":%d}]}`,
		renderplan.DigestString(cfg), len(cfg))
	withLen := func(n string, rest string) []byte { return []byte(n + "\n" + rest) }
	cases := map[string]struct {
		body        []byte
		limits      agentapi.Limits
		status      int
		unsupported bool
	}{
		"accepted as a baseline":       {body: framed(manifest, rawPart{"haproxy.cfg", cfg}), status: http.StatusOK},
		"manifest only":                {body: framed(manifest), status: http.StatusOK},
		"empty":                        {body: nil, status: http.StatusBadRequest},
		"length not a number":          {body: withLen("12a", manifest), status: http.StatusBadRequest},
		"length with a sign":           {body: withLen(fmt.Sprintf("+%d", len(manifest)), manifest), status: http.StatusBadRequest},
		"length with a leading zero":   {body: withLen(fmt.Sprintf("0%d", len(manifest)), manifest), status: http.StatusBadRequest},
		"length line too long":         {body: withLen(strings.Repeat("1", 30), manifest), status: http.StatusBadRequest},
		"length beyond the request":    {body: withLen(fmt.Sprint(len(manifest)+1), manifest), status: http.StatusBadRequest},
		"manifest over the limit":      {body: framed(manifest), limits: agentapi.Limits{MaxManifestBytes: 16}, status: http.StatusRequestEntityTooLarge},
		"request over the limit":       {body: framed(manifest, rawPart{"haproxy.cfg", cfg}), limits: agentapi.Limits{MaxBodyBytes: 64}, status: http.StatusRequestEntityTooLarge},
		"manifest not JSON":            {body: framed("planID: p"), status: http.StatusBadRequest},
		"body cut short":               {body: framed(manifest, rawPart{"haproxy.cfg", cfg[:3]}), status: http.StatusBadRequest},
		"body sent twice":              {body: framed(manifest, rawPart{"haproxy.cfg", cfg}, rawPart{"haproxy.cfg", cfg}), status: http.StatusBadRequest},
		"body for an unlisted file":    {body: framed(manifest, rawPart{"maps/hosts.map", cfg}), status: http.StatusBadRequest},
		"body path outside the tree":   {body: framed(manifest, rawPart{"../haproxy.cfg", cfg}), status: http.StatusBadRequest},
		"body path too long":           {body: framed(manifest, rawPart{strings.Repeat("a", agentapi.MaxPathLen+1), cfg}), status: http.StatusBadRequest},
		"body with the wrong digest":   {body: framed(manifest, rawPart{"haproxy.cfg", "GLOBAL\n"}), status: http.StatusBadRequest},
		"data after the last body":     {body: append(framed(manifest, rawPart{"haproxy.cfg", cfg}), "x"...), status: http.StatusBadRequest},
		"path line without a body":     {body: framed(manifest, rawPart{"haproxy.cfg", ""}), status: http.StatusBadRequest},
		"unknown manifest field":       {body: framed(strings.Replace(manifest, `"planID"`, `"priority":1,"planID"`, 1)), status: http.StatusUnprocessableEntity, unsupported: true},
		"unknown file kind":            {body: framed(strings.Replace(manifest, `"kind":"config"`, `"kind":"lua"`, 1)), status: http.StatusUnprocessableEntity, unsupported: true},
		"manifest claims a huge body":  {body: framed(strings.Replace(manifest, fmt.Sprintf(`"size":%d`, len(cfg)), `"size":1099511627776`, 1), rawPart{"haproxy.cfg", cfg}), status: http.StatusBadRequest},
		"manifest shorter than stated": {body: withLen(fmt.Sprint(len(manifest)-1), manifest), status: http.StatusBadRequest},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			fake := &fakeApplier{result: &agentapi.ApplyResult{PlanID: "p", OK: true}}
			c, tr, _ := testServer(t, fake, agentapi.HandlerOptions{Limits: tc.limits})
			tr.rewrite = func() ([]byte, string) { return tc.body, agentapi.ContentTypeApply }
			_, err := c.Apply(context.Background(), validRequest())
			t.Logf("error: %v", err)
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

func TestFramedAndMultipartRequestsReachTheApplierAlike(t *testing.T) {
	for _, format := range []string{"framed", "multipart"} {
		t.Run(format, func(t *testing.T) {
			fake := &fakeApplier{result: &agentapi.ApplyResult{PlanID: "plan-2", OK: true}}
			c, tr, _ := testServer(t, fake, agentapi.HandlerOptions{})
			req := validRequest()
			tr.rewrite = func() ([]byte, string) {
				if format == "framed" {
					return framedRequestBody(t, req), agentapi.ContentTypeApply
				}
				return fuzzBody(t, req), "multipart/form-data; boundary=" + fuzzBoundary
			}
			if _, err := c.Apply(context.Background(), req); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(req, fake.applies[0]); diff != "" {
				t.Errorf("request seen by the applier (-want +got):\n%s", diff)
			}
		})
	}
}

// oldAgent serves the handler only to multipart requests and answers
// anything else 415, as agents before the framed format did; it counts
// the requests of each kind.
type oldAgent struct {
	h http.Handler

	mu                sync.Mutex
	refused, accepted int
}

func (o *oldAgent) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == agentapi.PathApply && !strings.HasPrefix(r.Header.Get("Content-Type"), "multipart/form-data") {
		o.mu.Lock()
		o.refused++
		o.mu.Unlock()
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnsupportedMediaType)
		_, _ = io.WriteString(w, `{"error":"unsupported","stage":"decode","message":"content type is not multipart/form-data","unsupported":true}`)
		return
	}
	o.mu.Lock()
	o.accepted++
	o.mu.Unlock()
	o.h.ServeHTTP(w, r)
}

func TestClientFallsBackToMultipartForAnAgentThatRefusesTheFramedFormat(t *testing.T) {
	fake := &fakeApplier{result: &agentapi.ApplyResult{PlanID: "plan-2", OK: true}}
	old := &oldAgent{h: agentapi.NewHandler(fake, agentapi.HandlerOptions{Token: testToken})}
	c, _, _ := testServerFor(t, old)
	for i := range 2 {
		if _, err := c.Apply(context.Background(), validRequest()); err != nil {
			t.Fatalf("apply %d: %v", i, err)
		}
	}
	if old.refused != 1 || old.accepted != 2 {
		t.Errorf("old agent refused %d and accepted %d requests, want 1 and 2 (the client remembers)", old.refused, old.accepted)
	}
	if diff := cmp.Diff(validRequest(), fake.applies[1]); diff != "" {
		t.Errorf("request seen by the applier (-want +got):\n%s", diff)
	}
}

func TestBodiesCheckedOnlyForTheRequestTheHandlerBuilt(t *testing.T) {
	var checked, other bool
	h := agentapi.NewHandler(applyCtxFunc(func(ctx context.Context, req *agentapi.ApplyRequest) {
		checked = agentapi.BodiesChecked(ctx, req)
		other = agentapi.BodiesChecked(ctx, validRequest())
	}), agentapi.HandlerOptions{Token: testToken})
	c, _, _ := testServerFor(t, h)
	if _, err := c.Apply(context.Background(), validRequest()); err != nil {
		t.Fatal(err)
	}
	if !checked {
		t.Error("BodiesChecked = false for the handler's request, want true")
	}
	if other {
		t.Error("BodiesChecked = true for another request, want false")
	}
	if agentapi.BodiesChecked(context.Background(), validRequest()) {
		t.Error("BodiesChecked = true in process, want false")
	}
}

// applyCtxFunc is an Applier whose Apply calls a func with its context
// and acknowledges.
type applyCtxFunc func(context.Context, *agentapi.ApplyRequest)

func (f applyCtxFunc) State(context.Context) (*agentapi.State, error) {
	return &agentapi.State{}, nil
}

func (f applyCtxFunc) Apply(ctx context.Context, req *agentapi.ApplyRequest) (*agentapi.ApplyResult, error) {
	f(ctx, req)
	return &agentapi.ApplyResult{PlanID: req.PlanID, OK: true}, nil
}
