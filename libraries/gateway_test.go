package libraries_test

import (
	"context"
	"testing"

	"github.com/haptic-io/haptic/internal/haproxytest"
)

// coreRoutes is a Gateway with two HTTP listeners on port 80 (one for
// any host, one for *.foo.test) and one on 8080, and routes that
// exercise matching and precedence.
const coreRoutes = `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {namespace: t, name: gw, generation: 1}
spec:
  gatewayClassName: haptic
  listeners:
  - {name: http, port: 80, protocol: HTTP}
  - {name: foo, port: 80, protocol: HTTP, hostname: "*.foo.test"}
  - {name: zz, port: 80, protocol: HTTP, hostname: "*.zz.foo.test"}
  - {name: alt, port: 8080, protocol: HTTP}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {namespace: t, name: main, creationTimestamp: "2026-01-01T00:00:00Z"}
spec:
  parentRefs: [{name: gw, sectionName: http}]
  hostnames: [app.test]
  rules:
  - backendRefs: [{name: root, port: 8080}]
  - matches: [{path: {type: Exact, value: /exact}}]
    backendRefs: [{name: exact, port: 8080}]
  - matches: [{path: {type: PathPrefix, value: /v2}}]
    backendRefs: [{name: v2, port: 8080}]
  - matches: [{path: {type: PathPrefix, value: /v2}, headers: [{name: version, value: two}]}]
    backendRefs: [{name: v2-header, port: 8080}]
  - matches: [{path: {type: PathPrefix, value: /v2}, queryParams: [{name: q, value: "yes"}]}]
    backendRefs: [{name: v2-query, port: 8080}]
  - matches: [{path: {type: PathPrefix, value: /v2}, method: POST}]
    backendRefs: [{name: v2-post, port: 8080}]
  - matches: [{path: {type: PathPrefix, value: /cond}, headers: [{name: x, value: "1"}]}]
    backendRefs: [{name: cond, port: 8080}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {namespace: t, name: newer, creationTimestamp: "2026-01-02T00:00:00Z"}
spec:
  parentRefs: [{name: gw, sectionName: http}]
  hostnames: [app.test]
  rules:
  - matches: [{path: {type: PathPrefix, value: /v2}}]
    backendRefs: [{name: loser, port: 8080}]
  - matches: [{path: {type: PathPrefix, value: /v2}, headers: [{name: version, value: two}, {name: env, value: canary}]}]
    backendRefs: [{name: v2-two-headers, port: 8080}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {namespace: t, name: foo}
spec:
  parentRefs: [{name: gw, sectionName: foo}]
  rules: [{backendRefs: [{name: foo, port: 8080}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {namespace: t, name: zz}
spec:
  parentRefs: [{name: gw, sectionName: zz}]
  rules: [{backendRefs: [{name: zz, port: 8080}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {namespace: t, name: alt}
spec:
  parentRefs: [{name: gw, port: 8080}]
  rules: [{backendRefs: [{name: alt, port: 8080}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {namespace: t, name: broken}
spec:
  parentRefs: [{name: gw, sectionName: http}]
  hostnames: [broken.test]
  rules: [{backendRefs: [{name: missing, port: 8080}]}]
`

func coreFixture(t *testing.T) *gatewayFixture {
	f := newGatewayFixture(t, coreRoutes)
	f.services(1, "root", "exact", "v2", "v2-header", "v2-query", "v2-post", "cond", "loser", "v2-two-headers", "foo", "zz", "alt")
	return f
}

// TestGatewayLibraryOutputPassesHAProxyCheck renders the core routes and
// runs haproxy -c on every supported series.
func TestGatewayLibraryOutputPassesHAProxyCheck(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the real haproxy binary; skipped with -short")
	}
	out, _ := coreFixture(t).render(20000)
	haproxytest.ForEachSeries(t, func(t *testing.T, series string) {
		if err := newChecker(t, haproxytest.Binary(t, series)).Check(context.Background(), out); err != nil {
			t.Fatal(err)
		}
	})
}

// TestGatewayRoutingServesRealTraffic checks HTTPRoute matching and
// precedence through real HAProxy: exact over prefix, longer prefix,
// method, more headers, query, older route, listener isolation by host
// and port, 404 for nothing, 500 for a rule without valid backend.
func TestGatewayRoutingServesRealTraffic(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real HAProxy; skipped with -short")
	}
	for _, series := range []string{"3.0", "3.2", "3.4"} {
		t.Run(series, func(t *testing.T) {
			off, _, _ := coreFixture(t).start(series, 80, 8080)
			for _, tc := range []struct {
				req    request
				status int
				want   string
			}{
				{request{host: "app.test", path: "/"}, 200, "root"},
				{request{host: "app.test", path: "/anything"}, 200, "root"},
				{request{host: "app.test", path: "/exact"}, 200, "exact"},
				{request{host: "app.test", path: "/exact/x"}, 200, "root"},
				{request{host: "app.test", path: "/v2"}, 200, "v2"},
				{request{host: "app.test", path: "/v2/x"}, 200, "v2"},
				{request{host: "app.test", path: "/v2x"}, 200, "root"},
				{request{host: "app.test", path: "/v2/x", headers: map[string]string{"version": "two"}}, 200, "v2-header"},
				{request{host: "app.test", path: "/v2/x", headers: map[string]string{"version": "two", "env": "canary"}}, 200, "v2-two-headers"},
				{request{host: "app.test", path: "/v2/x", method: "POST", headers: map[string]string{"version": "two", "env": "canary"}}, 200, "v2-post"},
				{request{host: "app.test", path: "/v2/x?q=yes"}, 200, "v2-query"},
				{request{host: "app.test", path: "/v2/x?q=no"}, 200, "v2"},
				{request{host: "app.test", path: "/cond/x", headers: map[string]string{"x": "1"}}, 200, "cond"},
				{request{host: "app.test", path: "/cond/x"}, 200, "root"}, // falls back to the shorter prefix
				{request{host: "APP.test:80", path: "/exact"}, 200, "exact"},
				{request{host: "a.foo.test", path: "/"}, 200, "foo"},
				{request{host: "a.b.foo.test", path: "/x"}, 200, "foo"},
				{request{host: "a.zz.foo.test", path: "/x"}, 200, "zz"}, // the longest listener suffix wins
				{request{host: "zz.foo.test", path: "/x"}, 200, "foo"},
				{request{host: "foo.test", path: "/x"}, 404, ""}, // the http listener has no route for it
				{request{host: "other.test", path: "/"}, 404, ""},
				{request{host: "app.test", path: "/", port: 8080}, 200, "alt"},
				{request{host: "a.foo.test", path: "/", port: 8080}, 200, "alt"},
				{request{host: "broken.test", path: "/"}, 500, ""},
			} {
				a := do(t, off, tc.req)
				if a.status != tc.status || a.backend != tc.want {
					t.Errorf("%s %s%s (port %d, headers %v): %d from %q, want %d from %q", tc.req.method, tc.req.host, tc.req.path, tc.req.port, tc.req.headers, a.status, a.backend, tc.status, tc.want)
				}
			}
		})
	}
}
