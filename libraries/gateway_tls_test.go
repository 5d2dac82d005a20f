package libraries_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// selfSigned returns a certificate and key for names, PEM-encoded.
func selfSigned(t testing.TB, names ...string) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: names[0]}, DNSNames: names,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb})
}

func secretManifest(name string, crt, key []byte) string {
	return fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata: {namespace: t, name: %s}\ntype: kubernetes.io/tls\ndata: {tls.crt: %s, tls.key: %s}\n",
		name, base64.StdEncoding.EncodeToString(crt), base64.StdEncoding.EncodeToString(key))
}

// httpsGet sends GET https://host/path to 127.0.0.1:port with SNI
// sni, trusting roots; it returns the status, the answering backend and
// the certificate's first DNS name.
func httpsGet(t *testing.T, port int, sni, host, path string, roots *x509.CertPool) (int, string, string) {
	t.Helper()
	c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		DisableKeepAlives: true, Proxy: nil,
		TLSClientConfig: &tls.Config{RootCAs: roots, ServerName: sni},
	}}
	req, err := http.NewRequest(http.MethodGet, fmt.Sprintf("https://127.0.0.1:%d%s", port, path), nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = host
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("GET https://%s%s (SNI %s): %v", host, path, sni, err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, resp.Header.Get("X-Echo"), resp.TLS.PeerCertificates[0].DNSNames[0]
}

// TestGatewayHTTPSListenersServeTheirCertificates checks HTTPS
// termination: a listener without hostname (its certificate is the
// default) and one with a hostname on the same port, each with its own
// certificate and routes.
func TestGatewayHTTPSListenersServeTheirCertificates(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real HAProxy; skipped with -short")
	}
	crtA, keyA := selfSigned(t, "example.org")
	crtB, keyB := selfSigned(t, "second.org")
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(crtA)
	roots.AppendCertsFromPEM(crtB)
	f := newGatewayFixture(t, secretManifest("a", crtA, keyA)+"---\n"+secretManifest("b", crtB, keyB)+`---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {namespace: t, name: gw, generation: 1}
spec:
  gatewayClassName: haptic
  listeners:
  - {name: https, port: 443, protocol: HTTPS, tls: {certificateRefs: [{name: a}]}}
  - {name: https-second, port: 443, protocol: HTTPS, hostname: second.org, tls: {certificateRefs: [{name: b}]}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {namespace: t, name: first}
spec:
  parentRefs: [{name: gw}]
  hostnames: [example.org]
  rules: [{backendRefs: [{name: v1, port: 8080}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {namespace: t, name: second}
spec:
  parentRefs: [{name: gw, sectionName: https-second}]
  rules: [{backendRefs: [{name: v2, port: 8080}]}]
`)
	f.services(1, "v1", "v2")
	for _, series := range []string{"3.0", "3.4"} {
		t.Run(series, func(t *testing.T) {
			off, _, _ := f.start(series, 443)
			for _, tc := range []struct {
				sni, host string
				status    int
				backend   string
				cert      string
			}{
				{"example.org", "example.org", 200, "v1", "example.org"},
				{"second.org", "second.org", 200, "v2", "second.org"},
				{"example.org", "unknown.org", 404, "", "example.org"},
			} {
				status, backend, cert := httpsGet(t, 443+off, tc.sni, tc.host, "/", roots)
				if status != tc.status || backend != tc.backend || cert != tc.cert {
					t.Errorf("GET https://%s/ (SNI %s): %d from %q with certificate %q, want %d from %q with %q", tc.host, tc.sni, status, backend, cert, tc.status, tc.backend, tc.cert)
				}
			}
		})
	}
}

// TestGatewayTLSPassthroughRoutesBySNI checks TLSRoute passthrough: the
// client's handshake reaches the backend chosen by SNI, whose own
// certificate answers; an unknown SNI is refused.
func TestGatewayTLSPassthroughRoutesBySNI(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real HAProxy; skipped with -short")
	}
	crt, key := selfSigned(t, "tls.test")
	pair, err := tls.X509KeyPair(crt, key)
	if err != nil {
		t.Fatal(err)
	}
	l, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{pair}})
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Echo", "passthrough")
		_ = json.NewEncoder(w).Encode(r.Host)
	}), ReadHeaderTimeout: 5 * time.Second}
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close(); <-done })
	port := l.Addr().(*net.TCPAddr).Port

	f := newGatewayFixture(t, `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {namespace: t, name: gw, generation: 1}
spec:
  gatewayClassName: haptic
  listeners: [{name: tls, port: 8443, protocol: TLS, tls: {mode: Passthrough}}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: TLSRoute
metadata: {namespace: t, name: pass}
spec:
  parentRefs: [{name: gw}]
  hostnames: [tls.test]
  rules: [{backendRefs: [{name: secure, port: 8443}]}]
---
apiVersion: v1
kind: Service
metadata: {namespace: t, name: secure}
spec: {ports: [{name: https, port: 8443}]}
`)
	f.objs = append(f.objs, endpointSlice("secure", "secure-1", port, []any{map[string]any{
		"addresses": []any{"127.0.0.1"}, "conditions": map[string]any{"ready": true},
		"targetRef": map[string]any{"kind": "Pod", "namespace": "t", "name": "secure-0"},
	}}))
	f.objs[len(f.objs)-1]["ports"] = []any{map[string]any{"name": "https", "port": int64(port)}}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(crt)
	for _, series := range []string{"3.0", "3.4"} {
		t.Run(series, func(t *testing.T) {
			off, _, _ := f.start(series, 8443)
			status, backend, cert := httpsGet(t, 8443+off, "tls.test", "tls.test", "/", roots)
			if status != 200 || backend != "passthrough" || cert != "tls.test" {
				t.Errorf("GET https://tls.test/: %d from %q with certificate %q, want 200 from the passthrough backend", status, backend, cert)
			}
			conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", fmt.Sprintf("127.0.0.1:%d", 8443+off), &tls.Config{ServerName: "other.test", InsecureSkipVerify: true})
			if err == nil {
				conn.Close()
				t.Error("a handshake for an SNI no TLSRoute names succeeded")
			} else if !strings.Contains(err.Error(), "EOF") && !strings.Contains(err.Error(), "reset") {
				t.Logf("unknown SNI refused: %v", err)
			}
		})
	}
}

// TestGatewayHTTPSMisdirectedRequestsAnswer421 checks that on an HTTPS
// port with several listeners a request whose Host belongs to another
// listener than its SNI is answered 421, the cases of the conformance
// test HTTPRouteHTTPSListenerDetectMisdirectedRequests.
func TestGatewayHTTPSMisdirectedRequestsAnswer421(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real HAProxy; skipped with -short")
	}
	crt, key := selfSigned(t, "example.org", "second-example.org", "*.wildcard.org", "unknown-example.org")
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(crt)
	f := newGatewayFixture(t, secretManifest("c", crt, key)+`---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {namespace: t, name: gw, generation: 1}
spec:
  gatewayClassName: haptic
  listeners:
  - {name: https, port: 443, protocol: HTTPS, tls: {certificateRefs: [{name: c}]}}
  - {name: named, port: 443, protocol: HTTPS, hostname: second-example.org, tls: {certificateRefs: [{name: c}]}}
  - {name: wild, port: 443, protocol: HTTPS, hostname: "*.wildcard.org", tls: {certificateRefs: [{name: c}]}}
  - {name: fourth, port: 443, protocol: HTTPS, hostname: fourth-example.wildcard.org, tls: {certificateRefs: [{name: c}]}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {namespace: t, name: r1}
spec:
  parentRefs: [{name: gw, sectionName: https}]
  hostnames: [example.org]
  rules: [{backendRefs: [{name: v1, port: 8080}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {namespace: t, name: r2}
spec:
  parentRefs: [{name: gw, sectionName: named}]
  rules: [{backendRefs: [{name: v2, port: 8080}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {namespace: t, name: r3}
spec:
  parentRefs: [{name: gw, sectionName: wild}]
  rules: [{backendRefs: [{name: v3, port: 8080}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {namespace: t, name: r4}
spec:
  parentRefs: [{name: gw, sectionName: fourth}]
  rules: [{backendRefs: [{name: v1, port: 8080}]}]
`)
	f.services(1, "v1", "v2", "v3")
	for _, series := range []string{"3.0", "3.2", "3.4"} {
		t.Run(series, func(t *testing.T) {
			off, _, _ := f.start(series, 443)
			for _, tc := range []struct {
				sni, host string
				status    int
				backend   string
			}{
				{"example.org", "example.org", 200, "v1"},
				{"example.org", "second-example.org", 421, ""},
				{"example.org", "unknown-example.org", 404, ""},
				{"second-example.org", "second-example.org", 200, "v2"},
				{"second-example.org", "example.org", 421, ""},
				{"third.wildcard.org", "fifth.wildcard.org", 200, "v3"},
				{"third.wildcard.org", "fourth-example.wildcard.org", 421, ""},
				{"fourth-example.wildcard.org", "fourth-example.wildcard.org", 200, "v1"},
				{"fourth-example.wildcard.org", "fifth.wildcard.org", 421, ""},
				{"unknown-example.org", "example.org", 200, "v1"},
				{"unknown-example.org", "unknown-example.org", 404, ""},
			} {
				status, backend, _ := httpsGet(t, 443+off, tc.sni, tc.host, "/", roots)
				if status != tc.status || backend != tc.backend {
					t.Errorf("GET https://%s/ (SNI %s): %d from %q, want %d from %q", tc.host, tc.sni, status, backend, tc.status, tc.backend)
				}
			}
		})
	}
}

// TestGatewayTLSTerminateForwardsTheClearStream checks a TLS listener
// with mode Terminate on every series: HAProxy ends TLS with the
// listener's certificate and forwards the clear bytes to the TLSRoute's
// backend chosen by SNI (here a plain HTTP server); an SNI no route
// names is closed.
func TestGatewayTLSTerminateForwardsTheClearStream(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real HAProxy; skipped with -short")
	}
	crt, key := selfSigned(t, "*.term.test")
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(crt)
	f := newGatewayFixture(t, secretManifest("c", crt, key)+`---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {namespace: t, name: gw, generation: 1}
spec:
  gatewayClassName: haptic
  listeners:
  - {name: tls, port: 8443, protocol: TLS, hostname: "*.term.test", tls: {mode: Terminate, certificateRefs: [{name: c}]}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: TLSRoute
metadata: {namespace: t, name: a}
spec:
  parentRefs: [{name: gw}]
  hostnames: [a.term.test]
  rules: [{backendRefs: [{name: clear-a, port: 8080}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: TLSRoute
metadata: {namespace: t, name: b}
spec:
  parentRefs: [{name: gw}]
  hostnames: [b.term.test]
  rules: [{backendRefs: [{name: clear-b, port: 8080}]}]
`)
	f.services(1, "clear-a", "clear-b")
	for _, series := range []string{"3.0", "3.2", "3.4"} {
		t.Run(series, func(t *testing.T) {
			off, _, _ := f.start(series, 8443)
			for _, tc := range []struct{ sni, backend string }{{"a.term.test", "clear-a"}, {"b.term.test", "clear-b"}} {
				status, backend, cert := httpsGet(t, 8443+off, tc.sni, tc.sni, "/", roots)
				if status != 200 || backend != tc.backend || cert != "*.term.test" {
					t.Errorf("GET https://%s/: %d from %q with certificate %q, want 200 from %q with the listener's", tc.sni, status, backend, cert, tc.backend)
				}
			}
			conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", fmt.Sprintf("127.0.0.1:%d", 8443+off), &tls.Config{ServerName: "c.term.test", RootCAs: roots})
			if err != nil {
				t.Fatalf("handshake for c.term.test: %v (the listener's certificate covers it)", err)
			}
			defer conn.Close()
			_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
			_, _ = conn.Write([]byte("GET / HTTP/1.1\r\nHost: c.term.test\r\n\r\n"))
			if n, err := conn.Read(make([]byte, 1)); n != 0 || err == nil {
				t.Errorf("c.term.test (no route): read %d bytes, err %v, want the connection closed", n, err)
			}
		})
	}
}

// TestGatewayTLSMixedModesShareAPort checks a port with a Passthrough
// and a Terminate listener on every series: the passthrough host's
// handshake reaches its TLS backend (whose certificate answers), the
// terminate host's is ended by HAProxy with the listener's certificate
// and its clear stream reaches a plain backend.
func TestGatewayTLSMixedModesShareAPort(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real HAProxy; skipped with -short")
	}
	passCrt, passKey := selfSigned(t, "pass.test")
	pair, err := tls.X509KeyPair(passCrt, passKey)
	if err != nil {
		t.Fatal(err)
	}
	l, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{pair}})
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Echo", "passthrough")
	}), ReadHeaderTimeout: 5 * time.Second}
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close(); <-done })
	port := l.Addr().(*net.TCPAddr).Port

	termCrt, termKey := selfSigned(t, "term.test")
	f := newGatewayFixture(t, secretManifest("term", termCrt, termKey)+`---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {namespace: t, name: gw, generation: 1}
spec:
  gatewayClassName: haptic
  listeners:
  - {name: term, port: 8883, protocol: TLS, hostname: term.test, tls: {mode: Terminate, certificateRefs: [{name: term}]}}
  - {name: pass, port: 8883, protocol: TLS, hostname: pass.test, tls: {mode: Passthrough}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: TLSRoute
metadata: {namespace: t, name: pass}
spec:
  parentRefs: [{name: gw}]
  hostnames: [pass.test]
  rules: [{backendRefs: [{name: secure, port: 8443}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: TLSRoute
metadata: {namespace: t, name: term}
spec:
  parentRefs: [{name: gw}]
  hostnames: [term.test]
  rules: [{backendRefs: [{name: clear, port: 8080}]}]
---
apiVersion: v1
kind: Service
metadata: {namespace: t, name: secure}
spec: {ports: [{name: https, port: 8443}]}
`)
	f.objs = append(f.objs, endpointSlice("secure", "secure-1", port, []any{map[string]any{
		"addresses": []any{"127.0.0.1"}, "conditions": map[string]any{"ready": true},
		"targetRef": map[string]any{"kind": "Pod", "namespace": "t", "name": "secure-0"},
	}}))
	f.objs[len(f.objs)-1]["ports"] = []any{map[string]any{"name": "https", "port": int64(port)}}
	f.services(1, "clear")
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(passCrt)
	roots.AppendCertsFromPEM(termCrt)
	for _, series := range []string{"3.0", "3.2", "3.4"} {
		t.Run(series, func(t *testing.T) {
			off, _, _ := f.start(series, 8883)
			for _, tc := range []struct{ sni, backend string }{{"pass.test", "passthrough"}, {"term.test", "clear"}} {
				status, backend, cert := httpsGet(t, 8883+off, tc.sni, tc.sni, "/", roots)
				if status != 200 || backend != tc.backend || cert != tc.sni {
					t.Errorf("GET https://%s/: %d from %q with certificate %q, want 200 from %q with the %s certificate", tc.sni, status, backend, cert, tc.backend, tc.sni)
				}
			}
		})
	}
}
