package cluster

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// WebhookConfig configures the validating admission webhook every
// replica serves (see [Config].Webhook).
type WebhookConfig struct {
	// Listen is the HTTPS address of the webhook (":9443"); empty serves
	// none.
	Listen string
	// CertDir, when set, holds the serving certificate as tls.crt and
	// tls.key (a cert-manager Secret mounted there), reloaded when they
	// change; the controller then makes no certificate and patches no
	// caBundle. Empty: the controller makes them (see Secret).
	CertDir string
	// Secret names the Secret in the controller's namespace that holds
	// the CA and serving certificate the controller makes, shared by
	// every replica. Required without CertDir.
	Secret string
	// Hosts are the serving certificate's DNS names and IP addresses:
	// the Service's names (<service>.<namespace>.svc …), or the address of
	// a url clientConfig. Required without CertDir.
	Hosts []string
	// Configuration names the ValidatingWebhookConfiguration whose
	// webhooks' caBundle is set to the CA; empty patches none (without
	// CertDir, the caller must then trust the CA another way).
	Configuration string
}

// ServiceHosts are the DNS names a Service answers to, for
// [WebhookConfig].Hosts.
func ServiceHosts(service, namespace string) []string {
	return []string{service, service + "." + namespace, service + "." + namespace + ".svc", service + "." + namespace + ".svc.cluster.local"}
}

// serveTLS serves h on addr over TLS with the certificates of getCert
// until the returned stop is called.
func serveTLS(addr string, h http.Handler, getCert func(*tls.ClientHelloInfo) (*tls.Certificate, error), log *slog.Logger) (func(), error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("webhook: listen: %w", err)
	}
	srv := &http.Server{
		Handler:           h,
		TLSConfig:         &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: getCert},
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      maxReviewTimeout + 5*time.Second,
		IdleTimeout:       90 * time.Second,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelDebug),
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.ServeTLS(l, "", "")
	}()
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		<-done
	}, nil
}

// fileCerts serves the tls.crt and tls.key of a directory, read again
// when either file changes (checked at most every fileCertsRecheck, on a
// handshake): a mounted Secret that cert-manager renews.
type fileCerts struct {
	dir string
	log *slog.Logger

	mu      sync.Mutex
	cert    *tls.Certificate // guarded by mu
	stamp   string           // guarded by mu; the files' sizes and times when cert was read
	checked time.Time        // guarded by mu
}

const fileCertsRecheck = 2 * time.Second

func newFileCerts(dir string, log *slog.Logger) *fileCerts {
	f := &fileCerts{dir: dir, log: log}
	if _, err := f.GetCertificate(nil); err != nil {
		log.Warn("webhook certificate files not readable yet", "dir", dir, "error", err)
	}
	return f
}

func (f *fileCerts) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.cert != nil && time.Since(f.checked) < fileCertsRecheck {
		return f.cert, nil
	}
	f.checked = time.Now()
	crt, key := filepath.Join(f.dir, "tls.crt"), filepath.Join(f.dir, "tls.key")
	stamp, err := fileStamp(crt, key)
	if err == nil && stamp == f.stamp && f.cert != nil {
		return f.cert, nil
	}
	if err == nil {
		var c tls.Certificate
		if c, err = tls.LoadX509KeyPair(crt, key); err == nil {
			f.cert, f.stamp = &c, stamp
			f.log.Info("webhook certificate loaded", "dir", f.dir)
			return f.cert, nil
		}
	}
	if f.cert != nil {
		// A renewal caught half-written: keep serving the last good pair.
		f.log.Warn("webhook certificate files: keeping the last good pair", "dir", f.dir, "error", err)
		return f.cert, nil
	}
	return nil, fmt.Errorf("webhook certificate: %w", err)
}

func fileStamp(paths ...string) (string, error) {
	var s string
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			return "", err
		}
		s += fmt.Sprintf("%d/%d;", fi.Size(), fi.ModTime().UnixNano())
	}
	return s, nil
}

// check reports what is wrong with c.
func (c WebhookConfig) check() error {
	if c.Listen == "" || c.CertDir != "" {
		return nil
	}
	var errs []error
	if c.Secret == "" {
		errs = append(errs, errors.New("webhook: Secret is required without CertDir"))
	}
	if len(c.Hosts) == 0 {
		errs = append(errs, errors.New("webhook: Hosts is required without CertDir"))
	}
	return errors.Join(errs...)
}
