package minicluster

import (
	"crypto/ecdsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"net"
	"testing"
	"time"
)

func TestNewPKISignsLeavesTheCAVerifies(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	p, err := NewPKI(now, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(p.CA.CertPEM) {
		t.Fatal("CA certificate does not parse")
	}
	tests := map[string]struct {
		pair  KeyPair
		usage x509.ExtKeyUsage
		host  string // verified name, "" for client certificates
		cn    string
		org   []string
	}{
		"apiserver serving":         {p.APIServer, x509.ExtKeyUsageServerAuth, "127.0.0.1", "kube-apiserver", nil},
		"apiserver in-cluster name": {p.APIServer, x509.ExtKeyUsageServerAuth, "kubernetes.default.svc", "kube-apiserver", nil},
		"kubelet serving":           {p.Kubelet, x509.ExtKeyUsageServerAuth, "127.0.0.1", "minicluster-kubelet", nil},
		"admin client":              {p.Admin, x509.ExtKeyUsageClientAuth, "", "admin", []string{"system:masters"}},
		"controller manager client": {p.KCM, x509.ExtKeyUsageClientAuth, "", "system:kube-controller-manager", nil},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if _, err := tls.X509KeyPair(tc.pair.CertPEM, tc.pair.KeyPEM); err != nil {
				t.Fatalf("key pair does not match: %v", err)
			}
			b, _ := pem.Decode(tc.pair.CertPEM)
			cert, err := x509.ParseCertificate(b.Bytes)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := cert.Verify(x509.VerifyOptions{Roots: roots, DNSName: tc.host, CurrentTime: now,
				KeyUsages: []x509.ExtKeyUsage{tc.usage}}); err != nil {
				t.Fatalf("verify: %v", err)
			}
			if cert.Subject.CommonName != tc.cn || len(cert.Subject.Organization) != len(tc.org) {
				t.Fatalf("subject = %v, want CN=%s O=%v", cert.Subject, tc.cn, tc.org)
			}
			if _, err := cert.Verify(x509.VerifyOptions{Roots: roots, CurrentTime: now.Add(2 * time.Hour),
				KeyUsages: []x509.ExtKeyUsage{tc.usage}}); err == nil {
				t.Fatal("certificate still valid after the validity period")
			}
		})
	}
	b, _ := pem.Decode(p.APIServer.CertPEM)
	cert, _ := x509.ParseCertificate(b.Bytes)
	if !containsIP(cert.IPAddresses, "10.96.0.1") {
		t.Errorf("apiserver certificate lacks the service IP 10.96.0.1: %v", cert.IPAddresses)
	}
}

func TestNewPKIServiceAccountKeysMatch(t *testing.T) {
	p, err := NewPKI(time.Now(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := pem.Decode(p.SAKeyPEM)
	key, err := x509.ParsePKCS8PrivateKey(kb.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	pb, _ := pem.Decode(p.SAPubPEM)
	pub, err := x509.ParsePKIXPublicKey(pb.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if !pub.(*ecdsa.PublicKey).Equal(key.(*ecdsa.PrivateKey).Public()) {
		t.Fatal("service-account public key does not match the private key")
	}
}

func containsIP(ips []net.IP, s string) bool {
	for _, ip := range ips {
		if ip.String() == s {
			return true
		}
	}
	return false
}
