package cluster

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
)

var testHosts = append(ServiceHosts("haptic-webhook", "haptic"), "127.0.0.1")

func testVWC() *admissionregistrationv1.ValidatingWebhookConfiguration {
	url := "https://127.0.0.1:9443/validate"
	return &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "haptic"},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{
			{Name: "objects.haptic.haproxy-haptic.org", ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: &url}},
			{Name: "config.haptic.haproxy-haptic.org", ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: &url}},
		},
	}
}

func newTestCerts(kube kubernetes.Interface, now time.Time) *secretCerts {
	s := newSecretCerts(kube, "haptic", "haptic-webhook-tls", testHosts, "haptic", slog.New(slog.DiscardHandler))
	s.now = func() time.Time { return now }
	return s
}

// secretData returns the Secret's data.
func secretData(t *testing.T, kube kubernetes.Interface) map[string][]byte {
	t.Helper()
	sec, err := kube.CoreV1().Secrets("haptic").Get(context.Background(), "haptic-webhook-tls", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if sec.Type != corev1.SecretTypeTLS {
		t.Errorf("secret type %q, want %q", sec.Type, corev1.SecretTypeTLS)
	}
	return sec.Data
}

// verifies checks that the served certificate is trusted by the
// configuration's caBundle for every host.
func verifies(t *testing.T, kube kubernetes.Interface, s *secretCerts, at time.Time) {
	t.Helper()
	vwc, err := kube.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(context.Background(), "haptic", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c, err := s.GetCertificate(nil)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(c.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, wh := range vwc.Webhooks {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(wh.ClientConfig.CABundle) {
			t.Fatalf("webhook %s: no caBundle", wh.Name)
		}
		for _, h := range testHosts {
			if _, err := leaf.Verify(x509.VerifyOptions{Roots: pool, DNSName: h, CurrentTime: at}); err != nil {
				t.Errorf("webhook %s, host %s: %v", wh.Name, h, err)
			}
		}
	}
}

func TestWebhookCertsAreMadeOnceAndSharedByTheReplicas(t *testing.T) {
	kube := fake.NewClientset(testVWC())
	now := time.Now()
	a, b := newTestCerts(kube, now), newTestCerts(kube, now)
	var wg sync.WaitGroup
	for _, s := range []*secretCerts{a, b} {
		wg.Go(func() {
			if err := s.sync(context.Background()); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	ca, _ := a.GetCertificate(nil)
	cb, _ := b.GetCertificate(nil)
	if ca == nil || cb == nil || !bytes.Equal(ca.Certificate[0], cb.Certificate[0]) {
		t.Fatal("the replicas serve different certificates")
	}
	if !bytes.Equal(ca.Certificate[0], mustLeaf(t, secretData(t, kube)[corev1.TLSCertKey])) {
		t.Error("the served certificate is not the Secret's")
	}
	verifies(t, kube, a, now)

	// Nothing to do: no write.
	rv := secretRV(t, kube)
	if err := a.sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	if secretRV(t, kube) != rv {
		t.Error("a sync with nothing to do wrote the Secret")
	}
}

func TestWebhookCertsAreRenewedBeforeTheyExpire(t *testing.T) {
	kube := fake.NewClientset(testVWC())
	start := time.Now()
	s := newTestCerts(kube, start)
	if err := s.sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	first := secretData(t, kube)

	// Near the serving certificate's end: a new one from the same CA, so
	// the caBundle stays.
	later := start.Add(webhookServingValidity - webhookServingRenewBefore + time.Hour)
	s.now = func() time.Time { return later }
	if err := s.sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	second := secretData(t, kube)
	if bytes.Equal(first[corev1.TLSCertKey], second[corev1.TLSCertKey]) {
		t.Fatal("serving certificate not renewed")
	}
	if !bytes.Equal(first[secretCABundle], second[secretCABundle]) {
		t.Error("the CA changed with the serving certificate")
	}
	verifies(t, kube, s, later)

	// Near the CA's end: a new CA, the old one kept in the bundle while it
	// is valid, and a serving certificate from the new one.
	caEnd := start.Add(webhookCAValidity - webhookCARenewBefore + time.Hour)
	s.now = func() time.Time { return caEnd }
	if err := s.sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	third := secretData(t, kube)
	cas, err := parseCerts(third[secretCABundle])
	if err != nil || len(cas) != 2 {
		t.Fatalf("bundle after CA renewal: %d CAs (%v), want the new and the old", len(cas), err)
	}
	if old, _ := parseCerts(first[secretCABundle]); !cas[1].Equal(old[0]) {
		t.Error("the old CA is not the bundle's second")
	}
	verifies(t, kube, s, caEnd)
}

func TestWebhookCertsFollowTheNames(t *testing.T) {
	kube := fake.NewClientset(testVWC())
	s := newTestCerts(kube, time.Now())
	if err := s.sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	s.names = append(s.names, "webhook.example.com")
	if err := s.sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	c, _ := s.GetCertificate(nil)
	leaf, _ := x509.ParseCertificate(c.Certificate[0])
	if err := leaf.VerifyHostname("webhook.example.com"); err != nil {
		t.Errorf("new name not in the certificate: %v", err)
	}
}

func TestWebhookCertsPatchTheBundleAgainAfterAReset(t *testing.T) {
	kube := fake.NewClientset(testVWC())
	s := newTestCerts(kube, time.Now())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = s.run(ctx)
	}()
	defer func() {
		cancel()
		<-done
	}()
	vwcs := kube.AdmissionregistrationV1().ValidatingWebhookConfigurations()
	patched := func() bool {
		v, err := vwcs.Get(ctx, "haptic", metav1.GetOptions{})
		return err == nil && len(v.Webhooks[0].ClientConfig.CABundle) > 0 && len(v.Webhooks[1].ClientConfig.CABundle) > 0
	}
	waitFor(t, "caBundle patched", patched)
	// `helm upgrade` applies the chart's configuration, without a bundle.
	if _, err := vwcs.Update(ctx, testVWC(), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "caBundle patched again", patched)
	verifies(t, kube, s, time.Now())
}

func TestWebhookServesHTTPSWithTheSecretsCertificate(t *testing.T) {
	kube := fake.NewClientset(testVWC())
	s := newTestCerts(kube, time.Now())
	if err := s.sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	addr := freeLoopbackPort(t)
	stop, err := serveTLS(addr, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") }), s.GetCertificate, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(secretData(t, kube)[secretCABundle])
	cl := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	resp, err := cl.Get("https://" + addr + "/")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if b, _ := io.ReadAll(resp.Body); string(b) != "ok" {
		t.Errorf("body %q", b)
	}
}

func TestWebhookCertFilesAreReloadedWhenTheyChange(t *testing.T) {
	dir := t.TempDir()
	write := func(kp keyPair) {
		t.Helper()
		// As a mounted Secret changes: new files, then renamed into place.
		for name, b := range map[string][]byte{"tls.crt": kp.certPEM, "tls.key": kp.keyPEM} {
			tmp := filepath.Join(dir, "."+name)
			if err := os.WriteFile(tmp, b, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
				t.Fatal(err)
			}
		}
	}
	now := time.Now()
	ca, err := newCA(now, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	one, _ := issueServing(ca, []string{"one.example.com"}, now, time.Hour)
	two, _ := issueServing(ca, []string{"two.example.com"}, now, time.Hour)
	write(one)
	f := newFileCerts(dir, slog.New(slog.DiscardHandler))
	served := func() string {
		c, err := f.GetCertificate(nil)
		if err != nil {
			t.Fatal(err)
		}
		leaf, _ := x509.ParseCertificate(c.Certificate[0])
		return leaf.DNSNames[0]
	}
	if got := served(); got != "one.example.com" {
		t.Fatalf("serves %s", got)
	}
	write(two)
	f.mu.Lock()
	f.checked = time.Time{} // the recheck interval has passed
	f.mu.Unlock()
	if got := served(); got != "two.example.com" {
		t.Errorf("after the change: serves %s, want two.example.com", got)
	}
	// A half-written renewal keeps the last good pair.
	if err := os.WriteFile(filepath.Join(dir, "tls.key"), []byte("garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	f.checked = time.Time{}
	f.mu.Unlock()
	if got := served(); got != "two.example.com" {
		t.Errorf("after a bad key: serves %s, want the last good pair", got)
	}
}

func mustLeaf(t *testing.T, certPEM []byte) []byte {
	t.Helper()
	certs, err := parseCerts(certPEM)
	if err != nil {
		t.Fatal(err)
	}
	return certs[0].Raw
}

func secretRV(t *testing.T, kube kubernetes.Interface) string {
	t.Helper()
	sec, err := kube.CoreV1().Secrets("haptic").Get(context.Background(), "haptic-webhook-tls", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return sec.ResourceVersion + string(sec.Data[corev1.TLSCertKey])
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 20 s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func freeLoopbackPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// TestWebhookCertsSecretGoesWithTheConfig: the Secret is owned by the
// config, so that it goes when the config (an uninstall) goes; made
// before the config exists, it gets the owner at the next sync.
func TestWebhookCertsSecretGoesWithTheConfig(t *testing.T) {
	kube := fake.NewClientset(testVWC())
	s := newTestCerts(kube, time.Now())
	owner := metav1.OwnerReference{APIVersion: "haproxy-haptic.org/v1alpha1", Kind: "HAProxyTemplateConfig", Name: "haptic", UID: "u-1"}
	ownerErr := errors.New("config not found")
	s.owner = func(context.Context) (metav1.OwnerReference, error) { return owner, ownerErr }
	owners := func() []metav1.OwnerReference {
		sec, err := kube.CoreV1().Secrets("haptic").Get(context.Background(), "haptic-webhook-tls", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return sec.OwnerReferences
	}
	if err := s.sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := owners(); len(got) != 0 {
		t.Fatalf("owners %v before the config exists", got)
	}
	before := secretData(t, kube)
	ownerErr = nil
	for range 2 { // the second sync changes nothing
		if err := s.sync(context.Background()); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]metav1.OwnerReference{owner}, owners()); diff != "" {
			t.Errorf("owners (-want +got):\n%s", diff)
		}
	}
	if diff := cmp.Diff(before, secretData(t, kube)); diff != "" {
		t.Errorf("adding the owner changed the certificates (-before +after):\n%s", diff)
	}
}
