package cluster

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/haptic-io/haptic/internal/controller"
	"github.com/haptic-io/haptic/renderplan"
	"github.com/haptic-io/haptic/templating/fixtures"
)

func mustContain(t *testing.T, what, s string, subs ...string) {
	t.Helper()
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			t.Errorf("%s lacks %q:\n%s", what, sub, s)
		}
	}
}

func TestAdmissionJudgesIngressesInTheCurrentWorld(t *testing.T) {
	e := newAdmissionEnv(t, testSpec(), testChecker(t), fixtures.GenerateIngressMix(3))
	good := ingress("ns-0", "shop", "shop.example.com", "app-0")
	for name, tc := range map[string]struct {
		op       admissionv1.Operation
		obj, old map[string]any
		allowed  bool
		message  []string // substrings of the refusal or the allowed message
		warnings []string // substrings of the warnings, joined
	}{
		"a good Ingress is admitted": {op: admissionv1.Create, obj: good, allowed: true},
		"an invalid host is refused, naming the object and the field": {
			op: admissionv1.Create, obj: ingress("ns-0", "bad-host", "Bad_Host.example.com", "app-0"),
			message: []string{"HAPTIC refuses Ingress ns-0/bad-host", "HostInvalid", `host "Bad_Host.example.com"`, "not a lower-case DNS name"},
		},
		"a host already served by an older Ingress is refused": {
			op: admissionv1.Create, obj: ingress("ns-0", "thief", "app-1.example.com", "app-0"),
			message: []string{"Ingress ns-0/thief", "MapKeyConflict"},
		},
		"what HAProxy refuses is refused in HAProxy's words, with the line it names": {
			op: admissionv1.Create, obj: withAnnotation(good, "haptic.test/deny-from", "10.0.0.0/33"),
			message: []string{"HAPTIC refuses Ingress ns-0/shop: with it, HAProxy refuses the configuration (haproxy -c)",
				"haproxy.cfg:", "10.0.0.0/33", `"    http-request deny if { src 10.0.0.0/33 }"`},
		},
		"a missing Service is a warning: it may come next": {
			op: admissionv1.Create, obj: ingress("ns-0", "early", "early.example.com", "not-yet"), allowed: true,
			warnings: []string{"ServiceNotFound"},
		},
		"an Ingress of another class is admitted": {
			op: admissionv1.Create, obj: func() map[string]any {
				o := ingress("ns-0", "theirs", "Bad_Host", "x")
				o["spec"].(map[string]any)["ingressClassName"] = "nginx"
				return o
			}(), allowed: true,
		},
		"a deletion is always admitted": {op: admissionv1.Delete, old: ingress("ns-0", "bad", "Bad_Host", "x"), allowed: true},
		"an object being deleted is admitted (finalizers)": {
			op: admissionv1.Update, old: ingress("ns-0", "bad", "Bad_Host", "x"), allowed: true,
			obj: func() map[string]any {
				o := ingress("ns-0", "bad", "Bad_Host", "x")
				o["metadata"].(map[string]any)["deletionTimestamp"] = "2025-06-02T00:00:00Z"
				return o
			}(),
		},
	} {
		t.Run(name, func(t *testing.T) {
			code, resp, body := e.post(t, reviewBody(t, tc.op, ingressResource, tc.obj, tc.old))
			if code != http.StatusOK {
				t.Fatalf("status %d: %s", code, body)
			}
			msg := ""
			if resp.Result != nil {
				msg = resp.Result.Message
			}
			if resp.Allowed != tc.allowed {
				t.Fatalf("allowed = %v, want %v; message %q, warnings %q", resp.Allowed, tc.allowed, msg, resp.Warnings)
			}
			mustContain(t, "message", msg, tc.message...)
			mustContain(t, "warnings", strings.Join(resp.Warnings, "\n"), tc.warnings...)
			if !resp.Allowed && (resp.Result.Code != 403 || len(msg) > maxMessageBytes) {
				t.Errorf("refusal: code %d, %d bytes; want 403 and at most %d", resp.Result.Code, len(msg), maxMessageBytes)
			}
			t.Logf("allowed=%v message=%q warnings=%q", resp.Allowed, msg, resp.Warnings)
		})
	}
}

func TestAdmissionChecksARenderOnlyOnce(t *testing.T) {
	e := newAdmissionEnv(t, testSpec(), testChecker(t), fixtures.GenerateIngressMix(2))
	body := reviewBody(t, admissionv1.Create, ingressResource, ingress("ns-0", "shop", "shop.example.com", "app-0"), nil)
	for range 2 {
		if _, resp, _ := e.post(t, body); !resp.Allowed {
			t.Fatalf("refused: %v", resp.Result)
		}
	}
	if n := e.checks.Load(); n != 1 {
		t.Errorf("haproxy -c ran %d times for two reviews of one render, want 1", n)
	}
}

func TestAdmissionDoesNotRefuseAnUpdateForAProblemTheStoredObjectHas(t *testing.T) {
	bad := ingress("ns-0", "old-bad", "Bad_Host.example.com", "app-0")
	e := newAdmissionEnv(t, testSpec(), testChecker(t), append(fixtures.GenerateIngressMix(1), bad))
	relabelled := withAnnotation(bad, "team", "web")
	_, resp, _ := e.post(t, reviewBody(t, admissionv1.Update, ingressResource, relabelled, bad))
	if !resp.Allowed {
		t.Fatalf("update refused for the problem the stored object has: %v", resp.Result)
	}
	mustContain(t, "warnings", strings.Join(resp.Warnings, "\n"), "HostInvalid", "the stored version has it too")
	// A new problem on the same object is refused.
	worse := withAnnotation(bad, "x", "y")
	worse["spec"].(map[string]any)["rules"].([]any)[0].(map[string]any)["host"] = "Other_Bad"
	if _, resp, _ := e.post(t, reviewBody(t, admissionv1.Update, ingressResource, worse, bad)); resp.Allowed {
		t.Errorf("a new problem was admitted: warnings %q", resp.Warnings)
	}
}

func TestAdmissionDoesNotHoldAWorldThatFailsAlreadyAgainstTheCandidate(t *testing.T) {
	broken := withAnnotation(ingress("ns-0", "broken", "broken.example.com", "app-0"), "haptic.test/deny-from", "10.0.0.0/33")
	e := newAdmissionEnv(t, testSpec(), testChecker(t), append(fixtures.GenerateIngressMix(1), broken))
	_, resp, _ := e.post(t, reviewBody(t, admissionv1.Create, ingressResource, ingress("ns-0", "shop", "shop.example.com", "app-0"), nil))
	if !resp.Allowed {
		t.Fatalf("refused although the current world fails haproxy -c without it: %v", resp.Result)
	}
	mustContain(t, "warnings", strings.Join(resp.Warnings, "\n"), "the current configuration fails already")
}

func TestAdmissionLetsThroughWhatNoWatchHolds(t *testing.T) {
	spec := testSpec()
	spec["watchedResources"] = map[string]any{
		"ingresses": map[string]any{"apiVersion": "networking.k8s.io/v1", "resource": "ingresses",
			"indexBy": []any{"metadata.namespace", "metadata.name"}, "namespace": "ns-0", "labelSelector": "tier!=ignored"},
		"services": map[string]any{"apiVersion": "v1", "resource": "services", "indexBy": []any{"metadata.namespace", "metadata.name"}},
		"endpoints": map[string]any{"apiVersion": "discovery.k8s.io/v1", "resource": "endpointslices",
			"indexBy": []any{"metadata.namespace", `metadata.labels["kubernetes.io/service-name"]`}},
		"secrets": map[string]any{"apiVersion": "v1", "resource": "secrets", "indexBy": []any{"metadata.namespace", "metadata.name"}},
	}
	e := newAdmissionEnv(t, spec, testChecker(t), fixtures.GenerateIngressMix(1))
	bad := ingress("ns-1", "bad", "Bad_Host", "x")
	ignored := ingress("ns-0", "bad", "Bad_Host", "x")
	ignored["metadata"].(map[string]any)["labels"] = map[string]any{"tier": "ignored"}
	for name, tc := range map[string]struct {
		resource metav1.GroupVersionResource
		obj      map[string]any
		message  string
	}{
		"another namespace":    {ingressResource, bad, "outside the watches"},
		"another label":        {ingressResource, ignored, "outside the watches"},
		"an unwatched kind":    {metav1.GroupVersionResource{Group: "gateway.networking.k8s.io", Version: "v1", Resource: "httproutes"}, bad, "not a watched resource"},
		"an unwatched version": {metav1.GroupVersionResource{Group: "networking.k8s.io", Version: "v1beta1", Resource: "ingresses"}, bad, "not a watched resource"},
	} {
		t.Run(name, func(t *testing.T) {
			_, resp, _ := e.post(t, reviewBody(t, admissionv1.Create, tc.resource, tc.obj, nil))
			if !resp.Allowed {
				t.Fatalf("refused: %v", resp.Result)
			}
			mustContain(t, "message", resp.Result.Message, tc.message)
		})
	}
	// In scope it is judged.
	if _, resp, _ := e.post(t, reviewBody(t, admissionv1.Create, ingressResource, ingress("ns-0", "bad", "Bad_Host", "x"), nil)); resp.Allowed {
		t.Error("a bad Ingress in the watch's scope was admitted")
	}
}

var configResource = metav1.GroupVersionResource{Group: "haproxy-haptic.org", Version: "v1alpha1", Resource: "haproxytemplateconfigs"}

func configObj(namespace, name string, spec map[string]any) map[string]any {
	return map[string]any{"apiVersion": "haproxy-haptic.org/v1alpha1", "kind": "HAProxyTemplateConfig",
		"metadata": map[string]any{"namespace": namespace, "name": name, "generation": int64(2)}, "spec": spec}
}

func TestAdmissionPassesTheConfigThroughTheConfigLoadGate(t *testing.T) {
	e := newAdmissionEnv(t, testSpec(), testChecker(t), fixtures.GenerateIngressMix(1))
	broken := testSpec()
	broken["snippets"] = map[string]any{"base-global-zz": map[string]any{"template": "    no-such-keyword on\n"}}
	unparsable := testSpec()
	unparsable["libraries"] = []any{"base", "nope"}
	for name, tc := range map[string]struct {
		obj, old map[string]any
		allowed  bool
		message  []string
	}{
		"a good config":           {obj: configObj("haptic", "haptic", testSpec()), allowed: true},
		"one HAProxy refuses":     {obj: configObj("haptic", "haptic", broken), message: []string{"HAPTIC refuses HAProxyTemplateConfig haptic/haptic", "ValidationFailed", "no-such-keyword"}},
		"one that does not parse": {obj: configObj("haptic", "haptic", unparsable), message: []string{"ConfigInvalid", "nope"}},
		"another controller's":    {obj: configObj("haptic", "other", broken), allowed: true, message: []string{"not this controller's config"}},
		"a metadata-only update":  {obj: withAnnotation(configObj("haptic", "haptic", broken), "a", "b"), old: configObj("haptic", "haptic", broken), allowed: true},
	} {
		t.Run(name, func(t *testing.T) {
			op := admissionv1.Create
			if tc.old != nil {
				op = admissionv1.Update
			}
			_, resp, _ := e.post(t, reviewBody(t, op, configResource, tc.obj, tc.old))
			msg := ""
			if resp.Result != nil {
				msg = resp.Result.Message
			}
			if resp.Allowed != tc.allowed {
				t.Fatalf("allowed = %v, want %v: %s", resp.Allowed, tc.allowed, msg)
			}
			mustContain(t, "message", msg, tc.message...)
			t.Logf("%s", msg)
		})
	}
	if n := e.gated.Load(); n != 3 {
		t.Errorf("the gate ran %d times, want 3 (not for another's config nor a metadata update)", n)
	}
}

func TestAdmissionLeavesToTheFailurePolicyWhatItCannotJudge(t *testing.T) {
	a := newAdmitter(admitter{target: func() (*controller.Loop, []Watch) { return nil, nil }})
	e := &admissionEnv{a: a}
	body := reviewBody(t, admissionv1.Create, ingressResource, ingress("ns-0", "x", "x.example.com", "x"), nil)
	if code, _, msg := e.post(t, body); code != http.StatusServiceUnavailable || !strings.Contains(msg, "no accepted HAProxyTemplateConfig") {
		t.Errorf("before a config: %d %q, want 503 naming why", code, msg)
	}

	// A check that cannot run (not a refusal) is not judged either.
	broken := renderplan.CheckerFunc(func(context.Context, *renderplan.Output) error { return errors.New("exec: no haproxy") })
	e = newAdmissionEnv(t, testSpec(), broken, fixtures.GenerateIngressMix(1))
	if code, _, msg := e.post(t, body); code != http.StatusServiceUnavailable || !strings.Contains(msg, "no haproxy") {
		t.Errorf("checker broken: %d %q, want 503", code, msg)
	}
}

func TestAdmissionRefusesMalformedRequests(t *testing.T) {
	a := newAdmitter(admitter{target: func() (*controller.Loop, []Watch) { return nil, nil }})
	good := reviewBody(t, admissionv1.Delete, ingressResource, nil, ingress("a", "b", "c", "d"))
	for name, tc := range map[string]struct {
		method, ctype string
		body          []byte
		code          int
	}{
		"a GET":            {http.MethodGet, "application/json", good, http.StatusMethodNotAllowed},
		"not JSON":         {http.MethodPost, "text/plain", good, http.StatusUnsupportedMediaType},
		"too large":        {http.MethodPost, "application/json", bytes.Repeat([]byte(" "), MaxReviewBytes+1), http.StatusRequestEntityTooLarge},
		"a duplicate key":  {http.MethodPost, "application/json", []byte(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"a","uid":"b","operation":"DELETE"}}`), http.StatusBadRequest},
		"a v1beta1 review": {http.MethodPost, "application/json", []byte(`{"apiVersion":"admission.k8s.io/v1beta1","kind":"AdmissionReview","request":{"uid":"a","operation":"DELETE"}}`), http.StatusBadRequest},
		"well formed":      {http.MethodPost, "application/json; charset=utf-8", good, http.StatusOK},
	} {
		t.Run(name, func(t *testing.T) {
			req := httptest.NewRequest(tc.method, WebhookPath, bytes.NewReader(tc.body))
			req.Header.Set("Content-Type", tc.ctype)
			rec := httptest.NewRecorder()
			a.ServeHTTP(rec, req)
			if rec.Code != tc.code {
				t.Errorf("status %d, want %d: %s", rec.Code, tc.code, rec.Body.String())
			}
		})
	}
}

func TestReviewDeadlineAnswersBeforeTheApiserverGivesUp(t *testing.T) {
	for param, want := range map[string]time.Duration{
		"5s":   4 * time.Second,
		"2s":   1600 * time.Millisecond,
		"":     9 * time.Second,
		"junk": 9 * time.Second,
		"-1s":  9 * time.Second,
		"60s":  29 * time.Second,
	} {
		if got := reviewDeadline(param); got != want {
			t.Errorf("reviewDeadline(%q) = %v, want %v", param, got, want)
		}
	}
}

func TestClipCutsOnARuneBoundary(t *testing.T) {
	s := strings.Repeat("é", 10) // 20 bytes
	for n := 0; n <= 22; n++ {
		got := clip(s, n)
		if len(got) > max(n, len("…")) || !strings.HasPrefix(s+"…", strings.TrimSuffix(got, "…")) {
			t.Errorf("clip(%d) = %q", n, got)
		}
	}
	if clip("short", 10) != "short" {
		t.Error("a short string was cut")
	}
}
