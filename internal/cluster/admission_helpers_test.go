package cluster

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"sync/atomic"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/haptic-io/haptic/internal/controller"
	"github.com/haptic-io/haptic/internal/haproxytest"
	"github.com/haptic-io/haptic/rendergate"
	"github.com/haptic-io/haptic/renderplan"
	"github.com/haptic-io/haptic/store"
	"github.com/haptic-io/haptic/templating"
)

// denyFromSnippet is an operator snippet of the kind that lets an object
// field reach haproxy.cfg: the annotation haptic.test/deny-from of each
// Ingress denies that source network. The value is one word (no
// injection), but HAProxy alone knows whether it is a network: a bad one
// is what only haproxy -c finds.
const denyFromSnippet = `{{- range .resources.ingresses.List }}{{ with index .metadata "annotations" }}{{ with index . "haptic.test/deny-from" }}{{ if regexMatch "^[0-9a-fA-F.:/]+$" . }}
    http-request deny if { src {{ . }} }
{{- end }}{{ end }}{{ end }}{{ end }}
`

// testSpec is the HAProxyTemplateConfig spec of these tests: the stock
// libraries on loopback, plus the deny-from snippet.
func testSpec() map[string]any {
	return map[string]any{
		"libraries": []any{"base", "ingress"},
		"extraContext": map[string]any{"ingressClass": "haptic", "httpAddress": "127.0.0.1", "httpPort": int64(18080),
			"httpsPort": int64(0), "statsSocket": "stats.sock"},
		"podSelector": map[string]any{"matchLabels": map[string]any{"app": "haproxy"}},
		"snippets": map[string]any{
			"base-frontend-http-zz-deny-from": map[string]any{"template": denyFromSnippet},
		},
	}
}

// admissionEnv is a controller loop over a fixed world (no pods) and the
// webhook's handler in front of it.
type admissionEnv struct {
	loop    *controller.Loop
	watches []Watch
	a       *admitter
	checks  atomic.Int64 // haproxy -c runs
	gated   atomic.Int64 // config-load gate runs
}

// checker returns a haproxy -c checker on HAProxy 3.4 (skipping without
// one) whose scratch directory the check user can enter.
func testChecker(t testing.TB) *rendergate.HAProxyChecker {
	t.Helper()
	return testCheckerOf(t, false)
}

// testCheckerOf is testChecker, interactive as the webhook's is or at
// nice 19 as the gate's is.
func testCheckerOf(t testing.TB, interactive bool) *rendergate.HAProxyChecker {
	t.Helper()
	bin := haproxytest.Binary(t, "3.4")
	scratch, err := os.MkdirTemp("", "haptic-admission-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(scratch) })
	if err := os.Chmod(scratch, 0o755); err != nil {
		t.Fatal(err)
	}
	c, err := rendergate.NewHAProxyChecker(rendergate.Config{Binary: bin, ScratchDir: scratch, Interactive: interactive})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// newAdmissionEnv runs a loop on spec over objs and returns the webhook
// in front of it, once the loop rendered.
func newAdmissionEnv(t testing.TB, spec map[string]any, checker renderplan.Checker, objs []map[string]any) *admissionEnv {
	t.Helper()
	s, err := ParseSpec(spec, "haptic", 1)
	if err != nil {
		t.Fatal(err)
	}
	engine, err := templating.Compile(s.Templates)
	if err != nil {
		t.Fatal(err)
	}
	var changes []controller.Change
	for _, o := range objs {
		av, _ := o["apiVersion"].(string)
		kind, _ := o["kind"].(string)
		for _, w := range s.Watches {
			if w.APIVersion == av && w.Resource == store.ResourceForKind(kind) {
				ns, name, _ := store.ObjectMeta(o)
				changes = append(changes, controller.Change{Alias: w.Alias, Namespace: ns, Name: name, Object: o})
			}
		}
	}
	src := controller.SourceFunc(func(ctx context.Context, events chan<- controller.Event) error {
		select {
		case events <- controller.Event{Changes: changes, Initialized: true, Origin: "test"}:
		case <-ctx.Done():
		}
		<-ctx.Done()
		return ctx.Err()
	})
	loop, err := controller.New(controller.Config{Source: src, Engine: engine, Targets: func() []controller.Target { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = loop.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	deadline := time.Now().Add(time.Minute)
	for loop.Status().Reconciliations == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the loop did not render within a minute")
		}
		time.Sleep(5 * time.Millisecond)
	}
	e := &admissionEnv{loop: loop, watches: s.Watches}
	counted := renderplan.CheckerFunc(func(ctx context.Context, out *renderplan.Output) error {
		e.checks.Add(1)
		return checker.Check(ctx, out)
	})
	e.a = newAdmitter(admitter{
		target:          func() (*controller.Loop, []Watch) { return e.loop, e.watches },
		configNamespace: "haptic",
		configName:      "haptic",
		checker:         counted,
		gate: func(ctx context.Context, generation int64, spec map[string]any) error {
			e.gated.Add(1)
			s, err := ParseSpec(spec, "haptic", generation)
			if err != nil {
				return err
			}
			en, err := templating.Compile(s.Templates)
			if err != nil {
				return err
			}
			if _, err := templating.RunTests(ctx, en, templating.TestOptions{Checker: counted}); err != nil {
				return &testsError{err: err}
			}
			return nil
		},
	})
	return e
}

// reviewBody is the AdmissionReview the apiserver sends for op on obj
// (old: the stored version, for UPDATE and DELETE).
func reviewBody(t testing.TB, op admissionv1.Operation, resource metav1.GroupVersionResource, obj, old map[string]any) []byte {
	t.Helper()
	raw := func(o map[string]any) runtime.RawExtension {
		if o == nil {
			return runtime.RawExtension{}
		}
		b, err := json.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		return runtime.RawExtension{Raw: b}
	}
	ref := obj
	if ref == nil {
		ref = old
	}
	ns, name, _ := store.ObjectMeta(ref)
	ar := admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request: &admissionv1.AdmissionRequest{
			UID: types.UID("uid-1"), Operation: op, Resource: resource, Namespace: ns, Name: name,
			Object: raw(obj), OldObject: raw(old),
		},
	}
	b, err := json.Marshal(&ar)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

var ingressResource = metav1.GroupVersionResource{Group: "networking.k8s.io", Version: "v1", Resource: "ingresses"}

// post sends body to the handler and returns the status code and the
// response (nil unless 200).
func (e *admissionEnv) post(t testing.TB, body []byte) (int, *admissionv1.AdmissionResponse, string) {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, WebhookPath+"?timeout=10s", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	e.a.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		return rec.Code, nil, rec.Body.String()
	}
	var ar admissionv1.AdmissionReview
	if err := json.Unmarshal(rec.Body.Bytes(), &ar); err != nil {
		t.Fatalf("response: %v: %s", err, rec.Body.String())
	}
	if ar.Response == nil || ar.Response.UID != "uid-1" || ar.APIVersion != "admission.k8s.io/v1" || ar.Kind != "AdmissionReview" {
		t.Fatalf("response is not an AdmissionReview answering uid-1: %s", rec.Body.String())
	}
	return rec.Code, ar.Response, rec.Body.String()
}

// ingress is an Ingress of class haptic in ns routing host/ to Service
// svc port http.
func ingress(ns, name, host, svc string) map[string]any {
	return map[string]any{
		"apiVersion": "networking.k8s.io/v1",
		"kind":       "Ingress",
		"metadata":   map[string]any{"namespace": ns, "name": name, "creationTimestamp": "2025-06-01T00:00:00Z", "uid": "u-" + name},
		"spec": map[string]any{
			"ingressClassName": "haptic",
			"rules": []any{map[string]any{"host": host, "http": map[string]any{"paths": []any{map[string]any{
				"path": "/", "pathType": "Prefix",
				"backend": map[string]any{"service": map[string]any{"name": svc, "port": map[string]any{"name": "http"}}},
			}}}}},
		},
	}
}

// withAnnotation returns a copy of obj with the annotation set.
func withAnnotation(obj map[string]any, k, v string) map[string]any {
	b, _ := json.Marshal(obj)
	var out map[string]any
	_ = json.Unmarshal(b, &out)
	md := out["metadata"].(map[string]any)
	ann, _ := md["annotations"].(map[string]any)
	if ann == nil {
		ann = map[string]any{}
	}
	ann[k] = v
	md["annotations"] = ann
	return out
}
