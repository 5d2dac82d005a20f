package gatewayapi_test

import (
	"encoding/json"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/haptic-io/haptic/gatewayapi"
)

const oneListener = `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {namespace: infra, name: gw, generation: 1}
spec:
  gatewayClassName: haptic
  listeners: [{name: http, port: 80, protocol: HTTP}]
`

// contextOf returns the render context of infra/gw as JSON-decoded
// values, failing when there is none.
func contextOf(t *testing.T, m *gatewayapi.Model) map[string]any {
	t.Helper()
	ctx := m.RenderContext(gatewayapi.Ref{Namespace: "infra", Name: "gw"})
	if ctx == nil {
		t.Fatal("no render context")
	}
	b, err := json.Marshal(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func backendsByName(ctx map[string]any) map[string]map[string]any {
	out := map[string]map[string]any{}
	for _, b := range ctx["backends"].([]any) {
		bm := b.(map[string]any)
		out[bm["name"].(string)] = bm
	}
	return out
}

func selectors(ctx map[string]any) []map[string]any {
	var out []map[string]any
	for _, fe := range ctx["frontends"].([]any) {
		for _, s := range fe.(map[string]any)["selectors"].([]any) {
			out = append(out, s.(map[string]any))
		}
	}
	return out
}

// TestBackendRefFiltersGetABackendEach checks that a rule whose
// backendRefs carry header modifiers becomes a selector that picks one
// backend per backendRef by weight, each backend with its own header
// lines, the unresolved share going to the 500 backend.
func TestBackendRefFiltersGetABackendEach(t *testing.T) {
	m := build(t, oneListener+`
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {namespace: infra, name: r}
spec:
  parentRefs: [{name: gw}]
  rules:
  - backendRefs:
    - name: web
      port: 8080
      weight: 3
      filters:
      - {type: RequestHeaderModifier, requestHeaderModifier: {set: [{name: Backend, value: web}]}}
      - {type: ResponseHeaderModifier, responseHeaderModifier: {add: [{name: X-From, value: web}], remove: [Server]}}
    - {name: api, port: 8080, weight: 1}
    - {name: missing, port: 8080, weight: 1}
    - {name: api, port: 8080, weight: 0, filters: [{type: RequestHeaderModifier, requestHeaderModifier: {set: [{name: X, value: "0"}]}}]}
`)
	ctx := contextOf(t, m)
	sels := selectors(ctx)
	if len(sels) != 1 {
		t.Fatalf("selectors: %v, want one", sels)
	}
	s := sels[0]
	if s["backend"] != "" || s["total"] != float64(5) {
		t.Fatalf("selector backend %q total %v, want \"\" and 5", s["backend"], s["total"])
	}
	var picks []string
	for _, c := range s["choices"].([]any) {
		cm := c.(map[string]any)
		picks = append(picks, cm["backend"].(string)+" "+jsonOf(cm["lo"])+"-"+jsonOf(cm["hi"]))
	}
	bes := backendsByName(ctx)
	var web string
	for n := range bes {
		if strings.HasPrefix(n, "be_infra_web_8080_f") {
			web = n
		}
	}
	if web == "" {
		t.Fatalf("backends %v: want one be_infra_web_8080_f… with the filters", bes)
	}
	want := []string{web + " 0-3", "be_infra_api_8080 3-4", "haptic-500 4-5"}
	if diff := cmp.Diff(want, picks); diff != "" {
		t.Errorf("choices (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(`[{"code":0,"format":"","headers":[],"kind":"req-set","n":0,"name":"Backend","value":"web"},{"code":0,"format":"","headers":[],"kind":"rsp-add","n":0,"name":"X-From","value":"web"},{"code":0,"format":"","headers":[],"kind":"rsp-del","n":0,"name":"Server","value":""}]`, jsonOf(bes[web]["actions"])); diff != "" {
		t.Errorf("actions of %s (-want +got):\n%s", web, diff)
	}
	if got := jsonOf(bes["be_infra_api_8080"]["actions"]); got != "[]" {
		t.Errorf("be_infra_api_8080 actions %s, want none", got)
	}
	got := summary(m.Statuses(programmed))
	if !strings.Contains(got, "HTTPRoute infra/r parent gw: Accepted=True/Accepted ResolvedRefs=False/BackendNotFound") {
		t.Errorf("statuses:\n%s\nwant the route Accepted, ResolvedRefs False BackendNotFound", got)
	}
}

// TestBackendRefFiltersOtherThanHeadersAreRefused checks that a
// backendRef filter a backend section cannot apply makes that share
// answer 500 and the route UnsupportedValue.
func TestBackendRefFiltersOtherThanHeadersAreRefused(t *testing.T) {
	m := build(t, oneListener+`
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {namespace: infra, name: r}
spec:
  parentRefs: [{name: gw}]
  rules:
  - backendRefs:
    - {name: web, port: 8080, filters: [{type: URLRewrite, urlRewrite: {hostname: x.test}}]}
`)
	got := summary(m.Statuses(programmed))
	if !strings.Contains(got, "HTTPRoute infra/r parent gw: Accepted=False/UnsupportedValue") {
		t.Errorf("statuses:\n%s\nwant the route UnsupportedValue", got)
	}
	if got := mapsOf(contextOf(t, m)); !strings.Contains(got, "gw-paths-prefix.map: http|*/ haptic-500") {
		t.Errorf("maps:\n%s\nwant / answered by haptic-500", got)
	}
}

// TestRetryBecomesABackendOfItsOwn checks the retry policy's HAProxy
// form: retry-on with connection failures and the listed codes, retries
// from attempts (3 when unset), one backend per policy; a code HAProxy
// cannot retry on, or a backoff, is reported.
func TestRetryBecomesABackendOfItsOwn(t *testing.T) {
	m := build(t, oneListener+`
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {namespace: infra, name: r}
spec:
  parentRefs: [{name: gw}]
  rules:
  - matches: [{path: {type: PathPrefix, value: /a}}]
    retry: {codes: [503, 500, 500], attempts: 2}
    backendRefs: [{name: web, port: 8080}]
  - matches: [{path: {type: PathPrefix, value: /b}}]
    retry: {}
    timeouts: {request: 2s}
    backendRefs: [{name: web, port: 8080}]
  - backendRefs: [{name: web, port: 8080}]
`)
	ctx := contextOf(t, m)
	var got []string
	for n, b := range backendsByName(ctx) {
		got = append(got, strings.Join([]string{n[:min(len(n), 19)], b["retryOn"].(string), jsonOf(b["retries"]), jsonOf(b["timeoutMS"])}, "|"))
	}
	want := []string{
		"be_infra_web_8080_r|conn-failure empty-response 500 503|2|0",
		"be_infra_web_8080_t|conn-failure empty-response|3|2000",
		"be_infra_web_8080||0|0",
	}
	if diff := cmp.Diff(want, sorted(got)); diff != "" {
		t.Errorf("backends (-want +got):\n%s", diff)
	}
	if s := summary(m.Statuses(programmed)); !strings.Contains(s, "HTTPRoute infra/r parent gw: Accepted=True/Accepted") {
		t.Errorf("statuses:\n%s\nwant the route Accepted", s)
	}

	for _, retry := range []string{"{codes: [500, 418]}", "{codes: [500], backoff: 100ms}"} {
		m := build(t, oneListener+`
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {namespace: infra, name: r}
spec:
  parentRefs: [{name: gw}]
  rules: [{retry: `+retry+`, backendRefs: [{name: web, port: 8080}]}]
`)
		if s := summary(m.Statuses(programmed)); !strings.Contains(s, "HTTPRoute infra/r parent gw: Accepted=False/UnsupportedValue") {
			t.Errorf("retry %s: statuses:\n%s\nwant the route UnsupportedValue", retry, s)
		}
		if b := jsonOf(backendsByName(contextOf(t, m))); !strings.Contains(b, `"retryOn":"conn-failure empty-response 500"`) {
			t.Errorf("retry %s: backends %s, want the supported part still applied", retry, b)
		}
	}
}

// TestInvalidParametersRefRejectsTheGateway checks that a Gateway whose
// infrastructure names a parameters resource (HAPTIC reads none) is
// Accepted False InvalidParameters and not served.
func TestInvalidParametersRefRejectsTheGateway(t *testing.T) {
	m := build(t, `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {namespace: infra, name: gw, generation: 1}
spec:
  gatewayClassName: haptic
  listeners: [{name: http, port: 80, protocol: HTTP}]
  infrastructure:
    labels: {a: b}
    parametersRef: {group: invalid.io, kind: InvalidParameters, name: invalid}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {namespace: infra, name: meta, generation: 1}
spec:
  gatewayClassName: haptic
  listeners: [{name: http, port: 80, protocol: HTTP}]
  infrastructure: {labels: {a: b}}
`)
	s := summary(m.Statuses(programmed))
	if !strings.Contains(s, "Gateway infra/gw: Accepted=False/InvalidParameters Programmed=False/Invalid") {
		t.Errorf("statuses:\n%s\nwant infra/gw Accepted False InvalidParameters", s)
	}
	if !strings.Contains(s, "Gateway infra/meta: Accepted=True/Accepted") {
		t.Errorf("statuses:\n%s\nwant infra/meta (labels only) Accepted", s)
	}
	if diff := cmp.Diff([]gatewayapi.Ref{{Namespace: "infra", Name: "meta"}}, m.Gateways()); diff != "" {
		t.Errorf("Gateways (-want +got):\n%s", diff)
	}
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func sorted(s []string) []string {
	out := append([]string(nil), s...)
	sort.Strings(out)
	return out
}

// TestCORSFilterBecomesOriginPreflightAndResponseLines checks the CORS
// filter's actions: the origin expression (exact origins quoted, a
// wildcard host matching one or more labels), the preflight's headers
// (echoing wildcards, max-age 5 by default) and the response's.
func TestCORSFilterBecomesOriginPreflightAndResponseLines(t *testing.T) {
	m := build(t, oneListener+`
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {namespace: infra, name: r}
spec:
  parentRefs: [{name: gw}]
  rules:
  - filters:
    - type: CORS
      cors:
        allowOrigins: ["https://www.foo.com", "https://*.bar.com"]
        allowMethods: ["*"]
        allowHeaders: [x-a]
        exposeHeaders: ["*"]
        allowCredentials: true
    backendRefs: [{name: web, port: 8080}]
`)
	sels := selectors(contextOf(t, m))
	if len(sels) != 1 {
		t.Fatalf("selectors %v, want one", sels)
	}
	want := `[{"code":0,"format":"","headers":[],"kind":"cors-origin","n":0,"name":"","value":"^(https://www\\.foo\\.com|https://[^/]+\\.bar\\.com)$"},` +
		`{"code":0,"format":"","headers":[{"key":"Access-Control-Allow-Origin","value":"%[var(txn.cors)]"},{"key":"Access-Control-Allow-Methods","value":"%[req.hdr(access-control-request-method)]"},{"key":"Access-Control-Allow-Headers","value":"x-a"},{"key":"Access-Control-Max-Age","value":"5"},{"key":"Access-Control-Allow-Credentials","value":"true"}],"kind":"cors-preflight","n":0,"name":"","value":""},` +
		`{"code":0,"format":"","headers":[{"key":"Access-Control-Allow-Origin","value":"%[var(txn.cors)]"},{"key":"Access-Control-Allow-Credentials","value":"true"}],"kind":"cors-response","n":0,"name":"","value":""},` +
		`{"code":0,"format":"","headers":[],"kind":"rsp-add","n":0,"name":"Vary","value":"Origin"}]`
	if diff := cmp.Diff(want, jsonOf(sels[0]["actions"])); diff != "" {
		t.Errorf("actions (-want +got):\n%s", diff)
	}

	bad := build(t, oneListener+`
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {namespace: infra, name: r}
spec:
  parentRefs: [{name: gw}]
  rules: [{filters: [{type: CORS, cors: {allowOrigins: ["https://a.*.com"]}}], backendRefs: [{name: web, port: 8080}]}]
`)
	if s := summary(bad.Statuses(programmed)); !strings.Contains(s, "HTTPRoute infra/r parent gw: Accepted=False/UnsupportedValue") {
		t.Errorf("statuses:\n%s\nwant an origin with an inner wildcard refused", s)
	}
}

// TestTLSTerminateListeners checks TLS listeners with mode Terminate:
// accepted for TLSRoutes with their certificates on the frontend, beside
// a passthrough listener on the same port (a mixed frontend that lists
// the terminating listener in gw-tls-terminate.map), and without
// certificateRefs not programmed.
func TestTLSTerminateListeners(t *testing.T) {
	m := build(t, `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {namespace: infra, name: gw, generation: 1}
spec:
  gatewayClassName: haptic
  listeners:
  - {name: term, port: 8443, protocol: TLS, hostname: t.example.com, tls: {mode: Terminate, certificateRefs: [{name: cert}]}}
  - {name: mixed-term, port: 9443, protocol: TLS, hostname: a.example.com, tls: {mode: Terminate, certificateRefs: [{name: cert}]}}
  - {name: mixed-pass, port: 9443, protocol: TLS, hostname: b.example.com, tls: {mode: Passthrough}}
  - {name: nocert, port: 7443, protocol: TLS, tls: {mode: Terminate}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: TLSRoute
metadata: {namespace: infra, name: r}
spec:
  parentRefs: [{name: gw, sectionName: term}]
  hostnames: [t.example.com]
  rules: [{backendRefs: [{name: web, port: 8080}]}]
---
`+tlsSecret(t, "infra", "cert"))
	s := summary(m.Statuses(programmed))
	for _, want := range []string{
		"Gateway infra/gw listener term: attached=1 kinds=TLSRoute Accepted=True/Accepted Conflicted=False/NoConflicts Programmed=True/Programmed ResolvedRefs=True/ResolvedRefs",
		"Gateway infra/gw listener mixed-term: attached=0 kinds=TLSRoute Accepted=True/Accepted Conflicted=False/NoConflicts Programmed=True/Programmed ResolvedRefs=True/ResolvedRefs",
		"Gateway infra/gw listener mixed-pass: attached=0 kinds=TLSRoute Accepted=True/Accepted Conflicted=False/NoConflicts Programmed=True/Programmed ResolvedRefs=True/ResolvedRefs",
		"Gateway infra/gw listener nocert: attached=0 kinds=TLSRoute Accepted=True/Accepted Conflicted=False/NoConflicts Programmed=False/Invalid ResolvedRefs=False/InvalidCertificateRef",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("statuses:\n%s\nwant the line %q", s, want)
		}
	}
	ctx := contextOf(t, m)
	fes := map[float64]map[string]any{}
	for _, f := range ctx["frontends"].([]any) {
		fes[f.(map[string]any)["port"].(float64)] = f.(map[string]any)
	}
	if fe := fes[8443]; fe == nil || fe["protocol"] != "TLS" || fe["terminate"] != true || fe["mixed"] != false || len(fe["certs"].([]any)) != 1 {
		t.Errorf("frontend of port 8443: %v, want a TLS frontend that terminates with one certificate", fe)
	}
	if fe := fes[9443]; fe == nil || fe["terminate"] != false || fe["mixed"] != true || len(fe["certs"].([]any)) != 1 {
		t.Errorf("frontend of port 9443: %v, want a mixed TLS frontend with the terminating listener's certificate", fe)
	}
	if got := mapsOf(ctx); !strings.Contains(got, "gw-tls-terminate.map: mixed-term 1\n") || strings.Contains(got, "gw-tls-terminate.map: term ") {
		t.Errorf("maps:\n%s\nwant mixed-term (only) in gw-tls-terminate.map", got)
	}

	conflict := build(t, `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {namespace: infra, name: gw, generation: 1}
spec:
  gatewayClassName: haptic
  listeners:
  - {name: https, port: 9443, protocol: HTTPS, hostname: a.example.com, tls: {certificateRefs: [{name: cert}]}}
  - {name: tls, port: 9443, protocol: TLS, hostname: b.example.com, tls: {mode: Terminate, certificateRefs: [{name: cert}]}}
---
`+tlsSecret(t, "infra", "cert"))
	if s := summary(conflict.Statuses(programmed)); !strings.Contains(s, "listener tls: attached=0 kinds= Accepted=False/ProtocolConflict") {
		t.Errorf("statuses:\n%s\nwant HTTPS and TLS on one port in conflict", s)
	}
}

// extendedFuzzSeed exercises the extended features for FuzzBuild:
// backendRef filters, retry, CORS, a TLS Terminate listener and an
// infrastructure parametersRef.
const extendedFuzzSeed = `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {namespace: infra, name: gw, generation: 1}
spec:
  gatewayClassName: haptic
  listeners:
  - {name: http, port: 80, protocol: HTTP}
  - {name: term, port: 8443, protocol: TLS, tls: {mode: Terminate, certificateRefs: [{name: cert}]}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {namespace: infra, name: params, generation: 1}
spec:
  gatewayClassName: haptic
  listeners: [{name: http, port: 80, protocol: HTTP}]
  infrastructure: {parametersRef: {group: x.io, kind: P, name: p}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {namespace: infra, name: r}
spec:
  parentRefs: [{name: gw}]
  rules:
  - retry: {codes: [500, 599], attempts: 2, backoff: 1s}
    filters: [{type: CORS, cors: {allowOrigins: ["https://*.a.com", "*"], allowMethods: ["*"], allowHeaders: [x-a], exposeHeaders: ["*"], allowCredentials: true, maxAge: 10}}]
    backendRefs:
    - {name: web, port: 8080, weight: 2, filters: [{type: RequestHeaderModifier, requestHeaderModifier: {set: [{name: B, value: web}]}}]}
    - {name: api, port: 8080, filters: [{type: ResponseHeaderModifier, responseHeaderModifier: {remove: [Server]}}]}
    - {name: missing, port: 8080}
`
