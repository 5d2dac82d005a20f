package minicluster

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// KeyPair is a PEM-encoded certificate and its private key.
type KeyPair struct {
	CertPEM []byte
	KeyPEM  []byte
}

// PKI is everything the control plane needs: one CA that signs the serving
// and client certificates, and the service-account signing key.
type PKI struct {
	CA        KeyPair
	APIServer KeyPair // serving: 127.0.0.1, localhost, kubernetes.default.svc
	Admin     KeyPair // client: CN=admin, O=system:masters
	KCM       KeyPair // client: CN=system:kube-controller-manager
	Kubelet   KeyPair // serving for the process kubelet: 127.0.0.1, localhost
	// SAKeyPEM and SAPubPEM sign and verify service-account tokens.
	SAKeyPEM []byte
	SAPubPEM []byte
}

// certSpec describes one leaf certificate.
type certSpec struct {
	cn    string
	org   []string
	ips   []net.IP
	dns   []string
	usage x509.ExtKeyUsage
}

// NewPKI generates a fresh PKI with ECDSA P-256 keys valid for validity
// from now.
func NewPKI(now time.Time, validity time.Duration) (*PKI, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate ca key: %w", err)
	}
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "minicluster-ca"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(validity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, fmt.Errorf("sign ca: %w", err)
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, fmt.Errorf("parse ca: %w", err)
	}
	p := &PKI{}
	if p.CA, err = encodePair(caDER, caKey); err != nil {
		return nil, err
	}
	loopback := []net.IP{net.ParseIP("127.0.0.1")}
	leaves := []struct {
		dst  *KeyPair
		spec certSpec
	}{
		{&p.APIServer, certSpec{cn: "kube-apiserver", ips: append(loopback, net.ParseIP("10.96.0.1")),
			dns:   []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"},
			usage: x509.ExtKeyUsageServerAuth}},
		{&p.Admin, certSpec{cn: "admin", org: []string{"system:masters"}, usage: x509.ExtKeyUsageClientAuth}},
		{&p.KCM, certSpec{cn: "system:kube-controller-manager", usage: x509.ExtKeyUsageClientAuth}},
		{&p.Kubelet, certSpec{cn: "minicluster-kubelet", ips: loopback, dns: []string{"localhost"}, usage: x509.ExtKeyUsageServerAuth}},
	}
	for i, l := range leaves {
		if *l.dst, err = signLeaf(caCert, caKey, int64(i+2), l.spec, now, validity); err != nil {
			return nil, fmt.Errorf("sign %s: %w", l.spec.cn, err)
		}
	}
	saKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate service-account key: %w", err)
	}
	if p.SAKeyPEM, err = keyPEM(saKey); err != nil {
		return nil, err
	}
	pub, err := x509.MarshalPKIXPublicKey(&saKey.PublicKey)
	if err != nil {
		return nil, fmt.Errorf("encode service-account public key: %w", err)
	}
	p.SAPubPEM = pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub})
	return p, nil
}

func signLeaf(ca *x509.Certificate, caKey crypto.Signer, serial int64, s certSpec, now time.Time, validity time.Duration) (KeyPair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return KeyPair{}, fmt.Errorf("generate key: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial),
		Subject:      pkix.Name{CommonName: s.cn, Organization: s.org},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(validity),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  []x509.ExtKeyUsage{s.usage},
		IPAddresses:  s.ips,
		DNSNames:     s.dns,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return KeyPair{}, fmt.Errorf("sign: %w", err)
	}
	return encodePair(der, key)
}

func encodePair(der []byte, key *ecdsa.PrivateKey) (KeyPair, error) {
	k, err := keyPEM(key)
	if err != nil {
		return KeyPair{}, err
	}
	return KeyPair{CertPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), KeyPEM: k}, nil
}

func keyPEM(key *ecdsa.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("encode private key: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}

// pkiFiles are the paths WriteFiles wrote.
type pkiFiles struct {
	CACert, CAKey, APIServerCert, APIServerKey, AdminCert, AdminKey, KCMCert, KCMKey, SAKey, SAPub string
}

// writeFiles writes the PKI as PEM files (mode 0600) into dir.
func (p *PKI) writeFiles(dir string) (pkiFiles, error) {
	f := pkiFiles{}
	files := []struct {
		dst  *string
		name string
		data []byte
	}{
		{&f.CACert, "ca.crt", p.CA.CertPEM}, {&f.CAKey, "ca.key", p.CA.KeyPEM},
		{&f.APIServerCert, "apiserver.crt", p.APIServer.CertPEM}, {&f.APIServerKey, "apiserver.key", p.APIServer.KeyPEM},
		{&f.AdminCert, "admin.crt", p.Admin.CertPEM}, {&f.AdminKey, "admin.key", p.Admin.KeyPEM},
		{&f.KCMCert, "kcm.crt", p.KCM.CertPEM}, {&f.KCMKey, "kcm.key", p.KCM.KeyPEM},
		{&f.SAKey, "sa.key", p.SAKeyPEM}, {&f.SAPub, "sa.pub", p.SAPubPEM},
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return f, fmt.Errorf("write pki: %w", err)
	}
	for _, x := range files {
		*x.dst = filepath.Join(dir, x.name)
		if err := os.WriteFile(*x.dst, x.data, 0o600); err != nil {
			return f, fmt.Errorf("write pki: %w", err)
		}
	}
	return f, nil
}
