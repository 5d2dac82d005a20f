package templating_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/haptic-io/haptic/internal/haproxytest"
	"github.com/haptic-io/haptic/rendergate"
	"github.com/haptic-io/haptic/renderplan"
	"github.com/haptic-io/haptic/store"
	"github.com/haptic-io/haptic/templating"
	"github.com/haptic-io/haptic/templating/fixtures"
)

// selfSignedSecret returns a kubernetes.io/tls Secret default/tls.
func selfSignedSecret(t *testing.T) map[string]any {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "web.example.com"},
		DNSNames:     []string{"web.example.com"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	crt := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	k := pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
	return map[string]any{
		"apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/tls",
		"metadata": map[string]any{"namespace": "default", "name": "tls"},
		"data": map[string]any{
			"tls.crt": base64.StdEncoding.EncodeToString(crt),
			"tls.key": base64.StdEncoding.EncodeToString(k),
		},
	}
}

func TestRenderedTreesPassHAProxyCheckOnEverySeries(t *testing.T) {
	example, err := templating.LoadConfig("testdata/example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	// The TLS frontend (cert + crt-list) only renders with a Secret.
	tlsTest := example.ValidationTests["routes-one-ingress"]
	fx := map[string][]map[string]any{}
	for k, v := range tlsTest.Fixtures {
		fx[k] = v
	}
	fx["secrets"] = []map[string]any{selfSignedSecret(t)}
	tlsTest.Fixtures = fx
	tlsTest.Assertions = append(tlsTest.Assertions,
		templating.Assertion{Type: templating.AssertContains, Pattern: `ssl crt-list certs/list.txt`},
		templating.Assertion{Type: templating.AssertContains, Target: "cert:default.pem", Pattern: "PRIVATE KEY"},
		templating.Assertion{Type: templating.AssertHAProxyValid},
	)
	example.ValidationTests["with-tls"] = tlsTest
	exampleEngine, err := templating.Compile(example)
	if err != nil {
		t.Fatal(err)
	}

	bench, err := templating.LoadConfig("testdata/bench.yaml")
	if err != nil {
		t.Fatal(err)
	}
	benchEngine, err := templating.Compile(bench)
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.NewMemory(bench.WatchedResources)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.AddObjects(fixtures.GenerateIngressMix(50)...); err != nil {
		t.Fatal(err)
	}
	benchOut, problems, err := benchEngine.Render(context.Background(), st.Snapshot(), templating.RenderOptions{})
	if err != nil || len(problems) > 0 {
		t.Fatalf("render bench config: %v %v", err, problems)
	}

	haproxytest.ForEachSeries(t, func(t *testing.T, series string) {
		checker := haproxyChecker(t, series)
		report, err := templating.RunTests(context.Background(), exampleEngine, templating.TestOptions{Checker: checker})
		if err != nil {
			t.Fatalf("example validation tests: %v", err)
		}
		if report.Passed != 5 {
			t.Fatalf("passed %d tests, want 5", report.Passed)
		}
		if err := checker.Check(context.Background(), benchOut); err != nil {
			t.Fatalf("bench config with 50 ingresses: %v", err)
		}
	})
}

// haproxyQuote's output parses back to the original string in real
// HAProxy: ".notice" prints the word as HAProxy read it.
func TestHAProxyQuoteRoundTripsThroughHAProxy(t *testing.T) {
	hostile := `a"b$c\d e#f'g;h%[src]{x}`
	cfg := configWithTemplate(t, `.notice {{ haproxyQuote .extraContext.v }}
global
    log stdout format raw local0
`, hostile)
	haproxytest.ForEachSeries(t, func(t *testing.T, series string) {
		checker := haproxyChecker(t, series)
		err := checker.Check(context.Background(), cfg)
		// No listener: haproxy -c exits 2 after parsing; the notice is in
		// the output either way.
		var ce *rendergate.CheckError
		if err != nil && !errors.As(err, &ce) {
			t.Fatal(err)
		}
		if ce == nil || !strings.Contains(ce.Output, "'"+hostile+"'") {
			t.Fatalf("haproxy did not read the quoted word back as %q: %v", hostile, err)
		}
	})
}

func configWithTemplate(t *testing.T, tmpl, v string) *renderplan.Output {
	t.Helper()
	cfg := &templating.Config{
		HAProxyConfig: &templating.TemplateSource{Template: tmpl},
		ExtraContext:  map[string]any{"v": v},
	}
	out, problems, err := templating.Render(context.Background(), cfg, mustStore(t))
	if err != nil || len(problems) > 0 {
		t.Fatalf("render: %v %v", err, problems)
	}
	return out
}

func mustStore(t *testing.T) *store.Memory {
	t.Helper()
	st, err := store.NewMemory(nil)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// haproxyChecker is rendergate's haproxy -c checker on the given series.
func haproxyChecker(t *testing.T, series string) *rendergate.HAProxyChecker {
	t.Helper()
	c, err := rendergate.NewHAProxyChecker(rendergate.Config{Binary: haproxytest.Binary(t, series)})
	if err != nil {
		t.Fatal(err)
	}
	return c
}
