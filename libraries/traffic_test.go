package libraries_test

import (
	"testing"

	"github.com/haptic-io/haptic/internal/haproxytest"
)

// TestStockRoutingServesRealTraffic renders Ingresses whose EndpointSlices
// point at echo servers, starts HAProxy 3.0 and 3.4 on the rendered tree
// and checks which echo answers: host exact and wildcard, Exact vs Prefix,
// Kubernetes' element-wise prefixes, longest prefix first, rules without
// host, defaultBackend, and 404 when nothing matches.
func TestStockRoutingServesRealTraffic(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real HAProxy; skipped with -short")
	}
	for _, series := range []string{"3.0", "3.4"} {
		t.Run(series, func(t *testing.T) {
			r := newRouteFixture(t)
			r.ingress("routes", "2026-01-02T00:00:00Z", "", []rule{
				{host: "app.test", paths: []path{
					{"/", "Prefix", "root"},
					{"/foo", "Prefix", "foo"},
					{"/foo/exact", "Exact", "exact"},
					{"/foo/bar/", "Prefix", "foobar"},
					{"/img", "ImplementationSpecific", "img"},
				}},
				{host: "*.wild.test", paths: []path{{"/", "Prefix", "wild"}}},
				{host: "", paths: []path{{"/shared", "Prefix", "shared"}}},
			})
			r.ingress("fallback", "2026-01-01T00:00:00Z", "def", nil)
			url, _ := r.start(t, series)
			for _, tc := range []struct{ host, path, want string }{
				{"app.test", "/", "root"},
				{"app.test", "/foo", "foo"},
				{"app.test", "/foo/", "foo"},
				{"app.test", "/foobar", "root"}, // element-wise: /foo does not match /foobar
				{"app.test", "/foo/bar", "foobar"},
				{"app.test", "/foo/bar/baz", "foobar"}, // longest prefix wins
				{"app.test", "/foo/barx", "foo"},
				{"app.test", "/foo/exact", "exact"},
				{"app.test", "/foo/exact/x", "foo"}, // Exact is not a prefix
				{"app.test", "/img/a.png", "img"},
				{"app.test", "/foo?q=/foo/bar", "foo"}, // the query is not part of the path
				{"APP.test:8080", "/foo", "foo"},       // host is lower-cased, port dropped
				{"x.wild.test", "/any", "wild"},
				{"a.b.wild.test", "/any", "def"}, // a wildcard matches one label only
				{"wild.test", "/any", "def"},
				{"other.test", "/shared/x", "shared"}, // host-less rule
				{"app.test", "/shared/x", "root"},     // the host's own rules come first
				{"other.test", "/nothing", "def"},     // defaultBackend
			} {
				status, body := haproxytest.Get(t, url+tc.path, tc.host)
				if status != 200 || body != tc.want+"\n" {
					t.Errorf("GET %s%s: %d %q, want 200 %q", tc.host, tc.path, status, body, tc.want+"\n")
				}
			}
		})
	}
	t.Run("3.4-no-default-backend", func(t *testing.T) {
		r := newRouteFixture(t)
		r.ingress("routes", "2026-01-02T00:00:00Z", "", []rule{{host: "app.test", paths: []path{{"/api", "Prefix", "api"}}}})
		url, _ := r.start(t, "3.4")
		for _, tc := range []struct {
			host, path string
			status     int
		}{
			{"app.test", "/api/v1", 200},
			{"app.test", "/", 404},
			{"unknown.test", "/api", 404},
			{"", "/api", 404},
		} {
			if status, body := haproxytest.Get(t, url+tc.path, tc.host); status != tc.status {
				t.Errorf("GET %s%s: %d %q, want %d", tc.host, tc.path, status, body, tc.status)
			}
		}
	})
}
