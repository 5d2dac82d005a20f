package libraries_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/haptic-io/haptic/internal/haproxytest"
)

const filterRoutes = `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {namespace: t, name: gw, generation: 1}
spec:
  gatewayClassName: haptic
  listeners: [{name: http, port: 80, protocol: HTTP}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {namespace: t, name: filters}
spec:
  parentRefs: [{name: gw}]
  hostnames: [f.test]
  rules:
  - matches: [{path: {type: PathPrefix, value: /headers}}]
    filters:
    - type: RequestHeaderModifier
      requestHeaderModifier:
        set: [{name: X-Set, value: set-value}]
        add: [{name: X-Add, value: "add %value"}]
        remove: [X-Remove]
    - type: ResponseHeaderModifier
      responseHeaderModifier:
        set: [{name: X-Upstream, value: overridden}]
        add: [{name: X-Resp-Add, value: added}]
    backendRefs: [{name: web, port: 8080}]
  - matches: [{path: {type: PathPrefix, value: /redirect}}]
    filters: [{type: RequestRedirect, requestRedirect: {scheme: https, hostname: example.org, statusCode: 301}}]
  - matches: [{path: {type: PathPrefix, value: /redirect-port}}]
    filters: [{type: RequestRedirect, requestRedirect: {port: 8443}}]
  - matches: [{path: {type: PathPrefix, value: /redirect-path}}]
    filters: [{type: RequestRedirect, requestRedirect: {path: {type: ReplacePrefixMatch, replacePrefixMatch: /new}}}]
  - matches: [{path: {type: PathPrefix, value: /redirect-full}}]
    filters: [{type: RequestRedirect, requestRedirect: {path: {type: ReplaceFullPath, replaceFullPath: /full}, statusCode: 308}}]
  - matches: [{path: {type: PathPrefix, value: /prefix/one}}]
    filters: [{type: URLRewrite, urlRewrite: {path: {type: ReplacePrefixMatch, replacePrefixMatch: /one}}}]
    backendRefs: [{name: web, port: 8080}]
  - matches: [{path: {type: PathPrefix, value: /strip}}]
    filters: [{type: URLRewrite, urlRewrite: {hostname: rewritten.test, path: {type: ReplacePrefixMatch, replacePrefixMatch: /}}}]
    backendRefs: [{name: web, port: 8080}]
  - matches: [{path: {type: PathPrefix, value: /full}}]
    filters: [{type: URLRewrite, urlRewrite: {path: {type: ReplaceFullPath, replaceFullPath: /replaced}}}]
    backendRefs: [{name: web, port: 8080}]
`

// TestGatewayFiltersModifyRequestsAndResponses checks header modifiers,
// redirects and rewrites through real HAProxy on every series.
func TestGatewayFiltersModifyRequestsAndResponses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real HAProxy; skipped with -short")
	}
	for _, series := range []string{"3.0", "3.2", "3.4"} {
		t.Run(series, func(t *testing.T) {
			f := newGatewayFixture(t, filterRoutes)
			f.services(1, "web")
			off, _, _ := f.start(series, 80)

			a := do(t, off, request{host: "f.test", path: "/headers/x", headers: map[string]string{"X-Set": "old", "X-Add": "first", "X-Remove": "gone"}})
			h := a.got.Headers
			if a.status != 200 || strings.Join(h["X-Set"], ",") != "set-value" || strings.Join(h["X-Add"], ",") != "first,add %value" || h["X-Remove"] != nil {
				t.Errorf("request headers: %d %v, want X-Set set-value, X-Add first and 'add %%value', no X-Remove", a.status, h)
			}
			if a.header.Get("X-Upstream") != "overridden" || a.header.Get("X-Resp-Add") != "added" {
				t.Errorf("response headers: %v, want X-Upstream overridden and X-Resp-Add added", a.header)
			}

			for _, tc := range []struct {
				path     string
				status   int
				location string
			}{
				{"/redirect/a?b=c", 301, "https://example.org/redirect/a?b=c"},
				{"/redirect-port/a", 302, "http://f.test:8443/redirect-port/a"},
				{"/redirect-path/a", 302, "http://f.test/new/a"},
				{"/redirect-full/a", 308, "http://f.test/full"},
			} {
				a := do(t, off, request{host: "f.test", path: tc.path})
				if a.status != tc.status || a.location != tc.location {
					t.Errorf("GET %s: %d Location %q, want %d %q", tc.path, a.status, a.location, tc.status, tc.location)
				}
			}

			for _, tc := range []struct{ path, want, host string }{
				{"/prefix/one/two", "/one/two", "f.test"},
				{"/prefix/one", "/one", "f.test"},
				{"/strip/three", "/three", "rewritten.test"},
				{"/strip", "/", "rewritten.test"},
				{"/full/a/b", "/replaced", "f.test"},
			} {
				a := do(t, off, request{host: "f.test", path: tc.path})
				if a.status != 200 || a.got.Path != tc.want || a.got.Host != tc.host {
					t.Errorf("GET %s: %d, backend saw path %q host %q, want %q %q", tc.path, a.status, a.got.Path, a.got.Host, tc.want, tc.host)
				}
			}
		})
	}
}

// TestGatewayWeightsSplitTraffic sends 400 requests to a rule with
// weights 3:1 over Services of one and two endpoints: the shares come
// out near 3:1 whatever the endpoint counts.
func TestGatewayWeightsSplitTraffic(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real HAProxy; skipped with -short")
	}
	f := newGatewayFixture(t, `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {namespace: t, name: gw, generation: 1}
spec:
  gatewayClassName: haptic
  listeners: [{name: http, port: 80, protocol: HTTP}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {namespace: t, name: w}
spec:
  parentRefs: [{name: gw}]
  rules:
  - backendRefs: [{name: big, port: 8080, weight: 3}, {name: small, port: 8080, weight: 1}, {name: zero, port: 8080, weight: 0}]
`)
	f.services(1, "big", "zero")
	f.services(2, "small")
	off, _, _ := f.start("3.4", 80)
	counts := map[string]int{}
	for range 400 {
		counts[do(t, off, request{host: "w.test", path: "/"}).backend]++
	}
	if counts["zero"] != 0 || counts["big"] < 240 || counts["big"] > 360 || counts["big"]+counts["small"] != 400 {
		t.Errorf("400 requests went %v, want about 300 big, 100 small, none to zero", counts)
	}
}

// TestGatewayUnresolvedBackendShareAnswers500 sends 200 requests to a
// rule whose backendRefs are one Service (weight 1) and one that does
// not exist (weight 1): with errorPort set, about half answer 500.
func TestGatewayUnresolvedBackendShareAnswers500(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real HAProxy; skipped with -short")
	}
	f := newGatewayFixture(t, `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {namespace: t, name: gw, generation: 1}
spec:
  gatewayClassName: haptic
  listeners: [{name: http, port: 80, protocol: HTTP}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {namespace: t, name: w}
spec:
  parentRefs: [{name: gw}]
  rules: [{backendRefs: [{name: web, port: 8080}, {name: missing, port: 8080}]}]
`)
	f.services(1, "web")
	off := freeOffset(t, 80)
	out, _ := f.renderWith(off, map[string]any{"errorPort": int64(haproxytest.FreePort(t))})
	startOutput(t, "3.4", out)
	counts := map[int]int{}
	for range 200 {
		counts[do(t, off, request{host: "w.test", path: "/"}).status]++
	}
	if counts[200] < 60 || counts[500] < 60 || counts[200]+counts[500] != 200 {
		t.Errorf("200 requests answered %v, want about half 200 and half 500", counts)
	}
}

const backendFilterRoutes = `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {namespace: t, name: gw, generation: 1}
spec:
  gatewayClassName: haptic
  listeners: [{name: http, port: 80, protocol: HTTP}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {namespace: t, name: bf}
spec:
  parentRefs: [{name: gw}]
  hostnames: [bf.test]
  rules:
  - filters:
    - type: RequestHeaderModifier
      requestHeaderModifier: {set: [{name: X-Rule, value: rule}]}
    backendRefs:
    - name: one
      port: 8080
      weight: 1
      filters:
      - type: RequestHeaderModifier
        requestHeaderModifier: {set: [{name: Backend, value: one}], remove: [X-Remove]}
      - type: ResponseHeaderModifier
        responseHeaderModifier: {set: [{name: X-Upstream, value: one-set}], add: [{name: X-Picked, value: "one %"}]}
    - name: two
      port: 8080
      weight: 1
      filters:
      - type: RequestHeaderModifier
        requestHeaderModifier: {set: [{name: Backend, value: two}]}
    - {name: three, port: 8080, weight: 1}
`

// TestGatewayBackendRefFiltersApplyToTheirBackend sends 150 requests to
// a rule whose three backendRefs (weights 1:1:1) have their own filters,
// two of them header modifiers: every request carries the headers of the
// backend that answered it, and the rule's own filter, on every series.
func TestGatewayBackendRefFiltersApplyToTheirBackend(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real HAProxy; skipped with -short")
	}
	for _, series := range []string{"3.0", "3.2", "3.4"} {
		t.Run(series, func(t *testing.T) {
			f := newGatewayFixture(t, backendFilterRoutes)
			f.services(1, "one", "three")
			f.services(2, "two")
			off, _, _ := f.start(series, 80)
			counts := map[string]int{}
			for range 150 {
				a := do(t, off, request{host: "bf.test", path: "/", headers: map[string]string{"X-Remove": "x", "Backend": "client"}})
				counts[a.backend]++
				h := a.got.Headers
				if a.status != 200 || strings.Join(h["X-Rule"], ",") != "rule" {
					t.Fatalf("GET /: %d, headers %v, want 200 with X-Rule: rule", a.status, h)
				}
				want := map[string]struct{ backend, upstream, picked, remove string }{
					"one":   {"one", "one-set", "one %", ""},
					"two":   {"two", "set-by-upstream", "", "x"},
					"three": {"client", "set-by-upstream", "", "x"},
				}[a.backend]
				got := struct{ backend, upstream, picked, remove string }{
					strings.Join(h["Backend"], ","), a.header.Get("X-Upstream"), a.header.Get("X-Picked"), strings.Join(h["X-Remove"], ","),
				}
				if got != want {
					t.Fatalf("answer of %q: Backend %q X-Upstream %q X-Picked %q X-Remove %q, want %+v", a.backend, got.backend, got.upstream, got.picked, got.remove, want)
				}
			}
			for _, b := range []string{"one", "two", "three"} {
				if counts[b] < 25 {
					t.Errorf("150 requests went %v, want about 50 to each backend", counts)
					break
				}
			}
		})
	}
}

const retryRoutes = `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {namespace: t, name: gw, generation: 1}
spec:
  gatewayClassName: haptic
  listeners: [{name: http, port: 80, protocol: HTTP}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {namespace: t, name: retry}
spec:
  parentRefs: [{name: gw}]
  hostnames: [r.test]
  rules:
  - matches: [{path: {type: PathPrefix, value: /500-3}}]
    retry: {codes: [500], attempts: 3}
    backendRefs: [{name: web, port: 8080}]
  - matches: [{path: {type: PathPrefix, value: /all-2}}]
    retry: {codes: [500, 502, 503, 504], attempts: 2}
    timeouts: {request: 5s}
    backendRefs: [{name: web, port: 8080}]
  - matches: [{path: {type: PathPrefix, value: /none}}]
    backendRefs: [{name: web, port: 8080}]
`

// TestGatewayRetryRetriesTheRuleCodes checks a rule's retry on every
// series: a backend that fails n times then answers is retried up to
// the rule's attempts on the rule's codes only; a rule without retry
// passes the first failure through.
func TestGatewayRetryRetriesTheRuleCodes(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real HAProxy; skipped with -short")
	}
	for _, series := range []string{"3.0", "3.2", "3.4"} {
		t.Run(series, func(t *testing.T) {
			f := newGatewayFixture(t, retryRoutes)
			f.services(2, "web")
			off, _, _ := f.start(series, 80)
			for i, tc := range []struct {
				path        string
				code, after int
				want        int
			}{
				{"/500-3", 500, 2, 200},
				{"/500-3", 500, 3, 200},
				{"/500-3", 500, 4, 500},
				{"/500-3", 503, 1, 503},
				{"/all-2", 500, 1, 200},
				{"/all-2", 502, 2, 200},
				{"/all-2", 502, 3, 502},
				{"/all-2", 503, 1, 200},
				{"/all-2", 504, 3, 504},
				{"/none", 500, 1, 500},
			} {
				path := fmt.Sprintf("%s?code=%d&after=%d&id=%s-%s-%d", tc.path, tc.code, tc.after, t.Name(), series, i)
				if a := do(t, off, request{host: "r.test", path: path}); a.status != tc.want {
					t.Errorf("GET %s: %d, want %d", path, a.status, tc.want)
				}
			}
		})
	}
}

// TestGatewayCORSAnswersPreflightsAndMarksResponses checks the CORS
// filter on every series: a preflight from an allowed origin (exact or
// wildcard) is answered 204 with the allow headers, one from another
// origin reaches the backend without them; responses to an allowed
// origin carry Access-Control-Allow-Origin (and credentials when set).
func TestGatewayCORSAnswersPreflightsAndMarksResponses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real HAProxy; skipped with -short")
	}
	f := newGatewayFixture(t, `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {namespace: t, name: gw, generation: 1}
spec:
  gatewayClassName: haptic
  listeners: [{name: http, port: 80, protocol: HTTP}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {namespace: t, name: cors}
spec:
  parentRefs: [{name: gw}]
  rules:
  - matches: [{path: {type: PathPrefix, value: /one}}]
    filters:
    - type: CORS
      cors:
        allowOrigins: ["https://www.foo.com", "https://*.bar.com"]
        allowMethods: [GET, OPTIONS]
        allowHeaders: [x-header-1, x-header-2]
        exposeHeaders: [x-header-3]
        allowCredentials: true
        maxAge: 3600
    backendRefs: [{name: web, port: 8080}]
  - matches: [{path: {type: PathPrefix, value: /any}}]
    filters: [{type: CORS, cors: {allowOrigins: ["*"], allowMethods: ["*"], allowHeaders: ["*"]}}]
    backendRefs: [{name: web, port: 8080}]
`)
	f.services(1, "web")
	for _, series := range []string{"3.0", "3.2", "3.4"} {
		t.Run(series, func(t *testing.T) {
			off, _, _ := f.start(series, 80)
			preflight := func(path, origin, method, headers string) answer {
				h := map[string]string{"Origin": origin, "Access-Control-Request-Method": method}
				if headers != "" {
					h["Access-Control-Request-Headers"] = headers
				}
				return do(t, off, request{method: http.MethodOptions, host: "c.test", path: path, headers: h})
			}
			for _, origin := range []string{"https://www.foo.com", "https://a.b.bar.com"} {
				a := preflight("/one", origin, "GET", "x-header-1")
				want := map[string]string{
					"Access-Control-Allow-Origin": origin, "Access-Control-Allow-Methods": "GET, OPTIONS",
					"Access-Control-Allow-Headers": "x-header-1, x-header-2", "Access-Control-Expose-Headers": "x-header-3",
					"Access-Control-Max-Age": "3600", "Access-Control-Allow-Credentials": "true",
				}
				if a.status != 204 || a.backend != "" {
					t.Errorf("preflight from %s: %d from %q, want 204 from HAProxy", origin, a.status, a.backend)
				}
				for k, v := range want {
					if got := a.header.Get(k); got != v {
						t.Errorf("preflight from %s: %s %q, want %q", origin, k, got, v)
					}
				}
			}
			for _, origin := range []string{"https://foobar.com", "https://bar.com", "http://www.foo.com"} {
				if a := preflight("/one", origin, "GET", ""); a.backend != "web" || a.header.Get("Access-Control-Allow-Origin") != "" {
					t.Errorf("preflight from %s: %d from %q with Allow-Origin %q, want the backend's answer without it", origin, a.status, a.backend, a.header.Get("Access-Control-Allow-Origin"))
				}
			}
			a := do(t, off, request{host: "c.test", path: "/one", headers: map[string]string{"Origin": "https://www.foo.com"}})
			if a.status != 200 || a.backend != "web" || a.header.Get("Access-Control-Allow-Origin") != "https://www.foo.com" || a.header.Get("Access-Control-Allow-Credentials") != "true" || a.header.Get("Vary") != "Origin" {
				t.Errorf("GET from an allowed origin: %d from %q, headers %v, want 200 from web with Allow-Origin, Allow-Credentials, Vary", a.status, a.backend, a.header)
			}
			a = do(t, off, request{host: "c.test", path: "/one", headers: map[string]string{"Origin": "https://evil.com"}})
			if a.status != 200 || a.header.Get("Access-Control-Allow-Origin") != "" {
				t.Errorf("GET from another origin: %d, Allow-Origin %q, want 200 without it", a.status, a.header.Get("Access-Control-Allow-Origin"))
			}
			a = preflight("/any", "https://x.test:8443", "PUT", "x-a, x-b")
			if a.status != 204 || a.header.Get("Access-Control-Allow-Origin") != "https://x.test:8443" || a.header.Get("Access-Control-Allow-Methods") != "PUT" ||
				a.header.Get("Access-Control-Allow-Headers") != "x-a, x-b" || a.header.Get("Access-Control-Allow-Credentials") != "" || a.header.Get("Access-Control-Max-Age") != "5" {
				t.Errorf("wildcard preflight: %d, headers %v, want 204 echoing origin, method and headers, max-age 5, no credentials", a.status, a.header)
			}
		})
	}
}
