package libraries_test

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/haptic-io/haptic/internal/haproxytest"
	"github.com/haptic-io/haptic/store"
)

// TestStockBackendsCanBeDeletedAndAddedAtRuntimeOn34 shows why the base
// library routes only through maps: on HAProxy 3.4 a rendered Ingress
// backend can be deleted, and a new one created from the shared profile,
// with runtime commands alone, and traffic follows.
func TestStockBackendsCanBeDeletedAndAddedAtRuntimeOn34(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real HAProxy; skipped with -short")
	}
	r := newRouteFixture(t)
	r.ingress("a", "2026-01-01T00:00:00Z", "", []rule{{host: "app.test", paths: []path{{"/a", "Prefix", "a"}}}})
	b := haproxytest.StartEcho(t, "b")
	url, inst := r.start(t, "3.4")
	if status, body := haproxytest.Get(t, url+"/a/x", "app.test"); status != 200 || body != "a\n" {
		t.Fatalf("before: GET /a/x = %d %q", status, body)
	}
	cfg, err := os.ReadFile(inst.ConfigPath)
	if err != nil {
		t.Fatal(err)
	}
	prof := profileOf(t, string(cfg), "be_t_a_80")

	// Delete route and backend a.
	for _, c := range []struct{ cmd, want string }{
		{"del map maps/paths-prefix.map app.test/a/", ""},
		{"del map maps/paths-prefix-exact.map app.test/a", ""},
		{"unpublish backend be_t_a_80", "Backend unpublished."},
		{"set server be_t_a_80/a-pod state maint", ""},
		{"wait 5000 srv-removable be_t_a_80/a-pod", "Done."}, // an idle keep-alive connection may linger
		{"del server be_t_a_80/a-pod", "Server deleted."},
		{"del backend be_t_a_80", "Backend deleted."},
	} {
		if got := lastLine(inst.Cmd(t, c.cmd)); got != c.want {
			t.Fatalf("%s: %q, want %q", c.cmd, got, c.want)
		}
	}
	if status, _ := haproxytest.Get(t, url+"/a/x", "app.test"); status != 404 {
		t.Fatalf("after delete: GET /a/x = %d, want 404", status)
	}

	// Add backend b from the same profile and route /b to it.
	for _, c := range []struct{ cmd, want string }{
		{"add backend be_t_b_80 from " + prof + " guid haptic:be:be_t_b_80", "New backend registered."},
		{fmt.Sprintf("add server be_t_b_80/b-pod %s weight 1", b.Addr), "New server registered."},
		{"set server be_t_b_80/b-pod state ready", ""},
		{"publish backend be_t_b_80", "Backend published."},
		{"add map maps/paths-prefix.map app.test/b/ be_t_b_80", ""},
		{"add map maps/paths-prefix-exact.map app.test/b be_t_b_80", ""},
	} {
		if got := lastLine(inst.Cmd(t, c.cmd)); got != c.want {
			t.Fatalf("%s: %q, want %q", c.cmd, got, c.want)
		}
	}
	for _, p := range []string{"/b", "/b/x"} {
		if status, body := haproxytest.Get(t, url+p, "app.test"); status != 200 || body != "b\n" {
			t.Errorf("after add: GET %s = %d %q, want 200 \"b\\n\"", p, status, body)
		}
	}
}

// TestStockTLSServesTheSecretsCertificateBySNI checks the crt-list path on
// HAProxy 3.4: the Secret's certificate answers for its tls host, and with
// strict-sni another name gets no certificate.
func TestStockTLSServesTheSecretsCertificateBySNI(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real HAProxy; skipped with -short")
	}
	b, err := os.ReadFile("testdata/resources/basic/secrets.yaml")
	if err != nil {
		t.Fatal(err)
	}
	objs, err := store.DecodeManifests(b)
	if err != nil {
		t.Fatal(err)
	}
	secret := objs[0]
	secret["metadata"].(map[string]any)["namespace"] = "t"
	crtPEM, err := base64.StdEncoding.DecodeString(secret["data"].(map[string]any)["tls.crt"].(string))
	if err != nil {
		t.Fatal(err)
	}
	r := newRouteFixture(t)
	r.objs = append(r.objs, secret)
	r.ingress("secure", "2026-01-01T00:00:00Z", "", []rule{{host: "secure.example.com", paths: []path{{"/", "Prefix", "secure"}}}})
	r.objs[len(r.objs)-1]["spec"].(map[string]any)["tls"] = []any{map[string]any{"hosts": []any{"secure.example.com"}, "secretName": "secure-tls"}}
	httpsPort := haproxytest.FreePort(t)
	r.startWith(t, "3.4", map[string]any{"httpsPort": httpsPort})

	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(crtPEM) {
		t.Fatal("test certificate does not parse")
	}
	addr := fmt.Sprintf("127.0.0.1:%d", httpsPort)
	client := &http.Client{
		Timeout: 5 * time.Second,
		Transport: &http.Transport{
			DisableKeepAlives: true,
			DialContext:       (&net.Dialer{}).DialContext,
			TLSClientConfig:   &tls.Config{RootCAs: roots, ServerName: "secure.example.com"},
		},
	}
	req, err := http.NewRequest(http.MethodGet, "https://"+addr+"/hello", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = "secure.example.com"
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("GET https://secure.example.com/hello: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("X-Echo") != "secure" {
		t.Errorf("GET https://secure.example.com/hello: %d from %q, want 200 from secure", resp.StatusCode, resp.Header.Get("X-Echo"))
	}

	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", addr, &tls.Config{ServerName: "other.example.com", InsecureSkipVerify: true})
	if err == nil {
		conn.Close()
		t.Error("TLS handshake for other.example.com succeeded, want a refusal (strict-sni)")
	}
}
