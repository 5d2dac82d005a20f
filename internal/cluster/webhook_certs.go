package cluster

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync/atomic"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// Keys of the webhook's certificate Secret (type kubernetes.io/tls):
// the serving certificate and key, the CA bundle the apiserver trusts
// (the current CA first, then older ones still valid) and the current
// CA's key, with which any replica renews the serving certificate.
const (
	secretCABundle = "ca.crt"
	secretCAKey    = "ca.key"
)

// secretCerts keeps the webhook's serving certificate in a Secret that
// every replica shares: the first to find it missing creates it (a CA
// and a serving certificate made here), the others read it; whoever
// finds it near expiry renews it (a conflict means another replica did).
// It patches the caBundle of every webhook of the named
// ValidatingWebhookConfiguration to the Secret's CA bundle, again
// whenever the configuration changes (a `helm upgrade` resets it).
type secretCerts struct {
	kube                          kubernetes.Interface
	namespace, secret             string
	names                         []string // DNS names and IP addresses of the serving certificate
	configuration                 string   // the ValidatingWebhookConfiguration to patch; empty: none
	log                           *slog.Logger
	now                           func() time.Time
	caValidity, caRenew           time.Duration
	servingValidity, servingRenew time.Duration
	// owner, when set, is the owner reference the Secret gets so that it
	// goes with the HAProxyTemplateConfig; an error (no config yet) leaves
	// the Secret without one until a later sync.
	owner func(context.Context) (metav1.OwnerReference, error)

	current atomic.Pointer[tls.Certificate]
}

func newSecretCerts(kube kubernetes.Interface, namespace, secret string, names []string, configuration string, log *slog.Logger) *secretCerts {
	return &secretCerts{
		kube: kube, namespace: namespace, secret: secret, names: names, configuration: configuration, log: log,
		now: time.Now, caValidity: webhookCAValidity, caRenew: webhookCARenewBefore,
		servingValidity: webhookServingValidity, servingRenew: webhookServingRenewBefore,
	}
}

// GetCertificate is the tls.Config hook: the current serving certificate.
func (s *secretCerts) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	if c := s.current.Load(); c != nil {
		return c, nil
	}
	return nil, errors.New("webhook: no serving certificate yet")
}

// run keeps the certificate and the caBundle in order until ctx ends:
// at start, on every change of the Secret or the configuration, hourly
// (expiry), and after a failure with a doubling backoff.
func (s *secretCerts) run(ctx context.Context) error {
	kick := make(chan struct{}, 1)
	poke := func() {
		select {
		case kick <- struct{}{}:
		default:
		}
	}
	secrets := s.kube.CoreV1().Secrets(s.namespace)
	byName := func(name string) func(*metav1.ListOptions) {
		sel := fields.OneTermEqualSelector("metadata.name", name).String()
		return func(o *metav1.ListOptions) { o.FieldSelector = sel }
	}
	done := make(chan struct{})
	defer func() { <-done }()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	informers := []cache.SharedIndexInformer{watchNamed(byName(s.secret), &corev1.Secret{},
		func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return secrets.List(ctx, o) },
		func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) { return secrets.Watch(ctx, o) }, poke)}
	if s.configuration != "" {
		vwcs := s.kube.AdmissionregistrationV1().ValidatingWebhookConfigurations()
		informers = append(informers, watchNamed(byName(s.configuration), &admissionregistrationv1.ValidatingWebhookConfiguration{},
			func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return vwcs.List(ctx, o) },
			func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) { return vwcs.Watch(ctx, o) }, poke))
	}
	go func() {
		defer close(done)
		for _, inf := range informers {
			go inf.RunWithContext(ctx)
		}
		<-ctx.Done()
	}()

	var backoff time.Duration
	for {
		wait := time.Hour
		if err := s.sync(ctx); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			backoff = min(max(2*backoff, time.Second), time.Minute)
			wait = backoff
			s.log.Error("webhook certificate: retrying", "after", backoff, "error", err)
		} else {
			backoff = 0
		}
		select {
		case <-ctx.Done():
			return nil
		case <-kick:
		case <-time.After(wait):
		}
	}
}

// watchNamed returns an informer of one object that calls poke on every
// change.
func watchNamed(named func(*metav1.ListOptions), obj runtime.Object,
	list func(context.Context, metav1.ListOptions) (runtime.Object, error),
	watchFn func(context.Context, metav1.ListOptions) (watch.Interface, error), poke func()) cache.SharedIndexInformer {
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			named(&o)
			return list(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			named(&o)
			return watchFn(ctx, o)
		},
	}
	inf := cache.NewSharedIndexInformer(lw, obj, 0, cache.Indexers{})
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { poke() },
		UpdateFunc: func(any, any) { poke() },
		DeleteFunc: func(any) { poke() },
	})
	return inf
}

// sync makes the Secret hold a valid certificate, serves it, and puts the
// CA bundle into the webhook configuration.
func (s *secretCerts) sync(ctx context.Context) error {
	secrets := s.kube.CoreV1().Secrets(s.namespace)
	var owner *metav1.OwnerReference
	if s.owner != nil {
		if o, err := s.owner(ctx); err == nil {
			owner = &o
		} else {
			s.log.Debug("webhook certificate: no owner for the secret yet", "err", err)
		}
	}
	var data map[string][]byte
	for attempt := 0; ; attempt++ {
		if attempt == 5 {
			return errors.New("webhook certificate: the Secret keeps changing under us")
		}
		sec, err := secrets.Get(ctx, s.secret, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			fresh, _, err := s.renewed(nil)
			if err != nil {
				return err
			}
			sec = &corev1.Secret{
				ObjectMeta: metav1.ObjectMeta{Name: s.secret, Namespace: s.namespace,
					Labels: map[string]string{"app.kubernetes.io/part-of": "haptic", "app.kubernetes.io/component": "webhook"}},
				Type: corev1.SecretTypeTLS,
				Data: fresh,
			}
			if owner != nil {
				sec.OwnerReferences = []metav1.OwnerReference{*owner}
			}
			if _, err := secrets.Create(ctx, sec, metav1.CreateOptions{}); apierrors.IsAlreadyExists(err) {
				continue // another replica made it first: use theirs
			} else if err != nil {
				return fmt.Errorf("webhook certificate: create secret %s/%s: %w", s.namespace, s.secret, err)
			}
			s.log.Info("webhook certificate: created", "secret", s.namespace+"/"+s.secret, "names", s.names)
			data = fresh
			break
		}
		if err != nil {
			return fmt.Errorf("webhook certificate: get secret %s/%s: %w", s.namespace, s.secret, err)
		}
		next, why, err := s.renewed(sec.Data)
		if err != nil {
			return err
		}
		unowned := owner != nil && !slices.ContainsFunc(sec.OwnerReferences, func(o metav1.OwnerReference) bool { return o.UID == owner.UID })
		if why != "" || unowned {
			sec = sec.DeepCopy()
			sec.Data = next
			if unowned {
				sec.OwnerReferences = append(sec.OwnerReferences, *owner)
			}
			if _, err := secrets.Update(ctx, sec, metav1.UpdateOptions{}); apierrors.IsConflict(err) {
				continue // another replica renewed it: read theirs
			} else if err != nil {
				return fmt.Errorf("webhook certificate: update secret %s/%s: %w", s.namespace, s.secret, err)
			}
			if why != "" {
				s.log.Info("webhook certificate: renewed", "secret", s.namespace+"/"+s.secret, "why", why)
			}
		}
		data = next
		break
	}
	cert, err := tls.X509KeyPair(data[corev1.TLSCertKey], data[corev1.TLSPrivateKeyKey])
	if err != nil {
		return fmt.Errorf("webhook certificate: %w", err)
	}
	if old := s.current.Load(); old == nil || !bytes.Equal(old.Certificate[0], cert.Certificate[0]) {
		s.current.Store(&cert)
	}
	return s.patchBundle(ctx, data[secretCABundle])
}

// renewed returns data (the Secret's) with what is missing, invalid or
// near expiry made anew, and why ("" when nothing changed).
func (s *secretCerts) renewed(data map[string][]byte) (map[string][]byte, string, error) {
	now := s.now()
	out := map[string][]byte{}
	for k, v := range data {
		out[k] = v
	}
	var why string
	var bundle []*x509.Certificate
	ca, err := parseKeyPair(data[secretCABundle], data[secretCAKey])
	if err == nil {
		bundle, _ = parseCerts(data[secretCABundle])
	}
	switch {
	case err != nil:
		why = "no valid CA"
	case now.After(ca.cert.NotAfter.Add(-s.caRenew)):
		why = "CA expires " + ca.cert.NotAfter.UTC().Format(time.RFC3339)
	}
	if why != "" {
		if ca, err = newCA(now, s.caValidity); err != nil {
			return nil, "", err
		}
		// The old CAs stay in the bundle while they are valid: a client
		// that still holds the old bundle trusts nothing new otherwise.
		var b bytes.Buffer
		b.Write(ca.certPEM)
		for _, old := range bundle {
			if now.Before(old.NotAfter) {
				_ = pem.Encode(&b, &pem.Block{Type: "CERTIFICATE", Bytes: old.Raw})
			}
		}
		out[secretCABundle], out[secretCAKey] = b.Bytes(), ca.keyPEM
	}
	srv, err := parseKeyPair(data[corev1.TLSCertKey], data[corev1.TLSPrivateKeyKey])
	var swhy string
	switch {
	case err != nil:
		swhy = "no valid serving certificate"
	case !signedBy(srv.cert, ca.cert):
		swhy = "serving certificate not from the current CA"
	case !coversNames(srv.cert, s.names):
		swhy = "serving certificate names changed"
	case now.After(srv.cert.NotAfter.Add(-s.servingRenew)):
		swhy = "serving certificate expires " + srv.cert.NotAfter.UTC().Format(time.RFC3339)
	}
	if swhy != "" {
		if srv, err = issueServing(ca, s.names, now, s.servingValidity); err != nil {
			return nil, "", err
		}
		out[corev1.TLSCertKey], out[corev1.TLSPrivateKeyKey] = srv.certPEM, srv.keyPEM
		if why == "" {
			why = swhy
		}
	}
	return out, why, nil
}

// patchBundle sets the caBundle of every webhook of the configuration
// that lacks it.
func (s *secretCerts) patchBundle(ctx context.Context, bundle []byte) error {
	if s.configuration == "" {
		return nil
	}
	vwcs := s.kube.AdmissionregistrationV1().ValidatingWebhookConfigurations()
	vwc, err := vwcs.Get(ctx, s.configuration, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		s.log.Warn("webhook configuration not found: its caBundle is patched once it exists", "configuration", s.configuration)
		return nil
	}
	if err != nil {
		return fmt.Errorf("webhook configuration %s: %w", s.configuration, err)
	}
	var ops []map[string]any
	for i, wh := range vwc.Webhooks {
		if bytes.Equal(wh.ClientConfig.CABundle, bundle) {
			continue
		}
		at := fmt.Sprintf("/webhooks/%d", i)
		ops = append(ops,
			map[string]any{"op": "test", "path": at + "/name", "value": wh.Name},
			map[string]any{"op": "add", "path": at + "/clientConfig/caBundle", "value": base64.StdEncoding.EncodeToString(bundle)})
	}
	if len(ops) == 0 {
		return nil
	}
	patch, err := json.Marshal(ops)
	if err != nil {
		return err
	}
	if _, err := vwcs.Patch(ctx, s.configuration, types.JSONPatchType, patch, metav1.PatchOptions{FieldManager: "haptic-controller"}); err != nil {
		return fmt.Errorf("webhook configuration %s: patch caBundle: %w", s.configuration, err)
	}
	s.log.Info("webhook configuration: caBundle set", "configuration", s.configuration, "webhooks", len(ops)/2)
	return nil
}
