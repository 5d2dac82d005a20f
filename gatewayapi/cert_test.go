package gatewayapi_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"math/big"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// testCertificate returns a self-signed certificate and key for names,
// PEM-encoded.
func testCertificate(t testing.TB, names ...string) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: names[0]}, DNSNames: names,
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

func tlsSecret(t testing.TB, ns, name string) string {
	c, k := testCertificate(t, "example.org", "*.example.org")
	return fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata: {namespace: %s, name: %s}\ntype: kubernetes.io/tls\ndata: {tls.crt: %s, tls.key: %s}\n",
		ns, name, base64.StdEncoding.EncodeToString(c), base64.StdEncoding.EncodeToString(k))
}

func TestListenerCertificatesAndConflicts(t *testing.T) {
	manifests := tlsSecret(t, "infra", "good") + "---\n" + tlsSecret(t, "apps", "cross") + `---
apiVersion: v1
kind: Secret
metadata: {namespace: infra, name: malformed}
type: kubernetes.io/tls
data: {tls.crt: bm90IGEgY2VydA==, tls.key: bm90IGEga2V5}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {namespace: infra, name: gw, generation: 4}
spec:
  gatewayClassName: haptic
  listeners:
  - {name: good, port: 443, protocol: HTTPS, hostname: a.example.org, tls: {certificateRefs: [{name: good}]}}
  - {name: missing, port: 443, protocol: HTTPS, hostname: b.example.org, tls: {certificateRefs: [{name: nope}]}}
  - {name: malformed, port: 443, protocol: HTTPS, hostname: c.example.org, tls: {certificateRefs: [{name: malformed}]}}
  - {name: kind, port: 443, protocol: HTTPS, hostname: d.example.org, tls: {certificateRefs: [{group: example.com, kind: Vault, name: good}]}}
  - {name: cross-denied, port: 443, protocol: HTTPS, hostname: e.example.org, tls: {certificateRefs: [{name: cross, namespace: apps}]}}
  - {name: dup-a, port: 80, protocol: HTTP, hostname: x.example.org}
  - {name: dup-b, port: 80, protocol: HTTP, hostname: x.example.org}
  - {name: tls-on-80, port: 80, protocol: TLS, hostname: y.example.org, tls: {mode: Passthrough}}
  - {name: plain, port: 8080, protocol: HTTP}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {namespace: other, name: granted, generation: 1}
spec:
  gatewayClassName: haptic
  listeners:
  - {name: cross, port: 443, protocol: HTTPS, tls: {certificateRefs: [{name: cross, namespace: apps}]}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: ReferenceGrant
metadata: {namespace: apps, name: secrets-for-other}
spec:
  from: [{group: gateway.networking.k8s.io, kind: Gateway, namespace: other}]
  to: [{group: "", kind: Secret, name: cross}]
`
	got := summary(build(t, manifests).Statuses(programmed))
	want := `Gateway infra/gw: Accepted=True/ListenersNotValid Programmed=True/Programmed
Gateway infra/gw listener good: attached=0 kinds=HTTPRoute,GRPCRoute Accepted=True/Accepted Conflicted=False/NoConflicts Programmed=True/Programmed ResolvedRefs=True/ResolvedRefs
Gateway infra/gw listener missing: attached=0 kinds=HTTPRoute,GRPCRoute Accepted=True/Accepted Conflicted=False/NoConflicts Programmed=False/Invalid ResolvedRefs=False/InvalidCertificateRef
Gateway infra/gw listener malformed: attached=0 kinds=HTTPRoute,GRPCRoute Accepted=True/Accepted Conflicted=False/NoConflicts Programmed=False/Invalid ResolvedRefs=False/InvalidCertificateRef
Gateway infra/gw listener kind: attached=0 kinds=HTTPRoute,GRPCRoute Accepted=True/Accepted Conflicted=False/NoConflicts Programmed=False/Invalid ResolvedRefs=False/InvalidCertificateRef
Gateway infra/gw listener cross-denied: attached=0 kinds=HTTPRoute,GRPCRoute Accepted=True/Accepted Conflicted=False/NoConflicts Programmed=False/Invalid ResolvedRefs=False/RefNotPermitted
Gateway infra/gw listener dup-a: attached=0 kinds= Accepted=False/ProtocolConflict Conflicted=True/ProtocolConflict Programmed=False/Invalid ResolvedRefs=True/ResolvedRefs
Gateway infra/gw listener dup-b: attached=0 kinds= Accepted=False/ProtocolConflict Conflicted=True/ProtocolConflict Programmed=False/Invalid ResolvedRefs=True/ResolvedRefs
Gateway infra/gw listener tls-on-80: attached=0 kinds= Accepted=False/ProtocolConflict Conflicted=True/ProtocolConflict Programmed=False/Invalid ResolvedRefs=True/ResolvedRefs
Gateway infra/gw listener plain: attached=0 kinds=HTTPRoute,GRPCRoute Accepted=True/Accepted Conflicted=False/NoConflicts Programmed=True/Programmed ResolvedRefs=True/ResolvedRefs
Gateway other/granted: Accepted=True/Accepted Programmed=True/Programmed
Gateway other/granted listener cross: attached=0 kinds=HTTPRoute,GRPCRoute Accepted=True/Accepted Conflicted=False/NoConflicts Programmed=True/Programmed ResolvedRefs=True/ResolvedRefs
GatewayClass haptic: Accepted=True/Accepted
`
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("statuses (-want +got):\n%s", diff)
	}
}

func TestHostnameConflictOnOnePort(t *testing.T) {
	got := summary(build(t, `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {namespace: infra, name: gw, generation: 1}
spec:
  gatewayClassName: haptic
  listeners:
  - {name: a, port: 80, protocol: HTTP, hostname: x.example.org}
  - {name: b, port: 80, protocol: HTTP, hostname: x.example.org}
  - {name: c, port: 80, protocol: HTTP}
`).Statuses(programmed))
	want := `Gateway infra/gw: Accepted=True/ListenersNotValid Programmed=True/Programmed
Gateway infra/gw listener a: attached=0 kinds= Accepted=False/HostnameConflict Conflicted=True/HostnameConflict Programmed=False/Invalid ResolvedRefs=True/ResolvedRefs
Gateway infra/gw listener b: attached=0 kinds= Accepted=False/HostnameConflict Conflicted=True/HostnameConflict Programmed=False/Invalid ResolvedRefs=True/ResolvedRefs
Gateway infra/gw listener c: attached=0 kinds=HTTPRoute,GRPCRoute Accepted=True/Accepted Conflicted=False/NoConflicts Programmed=True/Programmed ResolvedRefs=True/ResolvedRefs
GatewayClass haptic: Accepted=True/Accepted
`
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("statuses (-want +got):\n%s", diff)
	}
}
