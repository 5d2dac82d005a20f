package cluster

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"sync"

	"github.com/haptic-io/haptic/internal/controller"
	"github.com/haptic-io/haptic/rendergate"
)

// startWebhook serves the admission webhook on this replica, leader or
// not, and keeps its certificate; stop ends the server (the certificate
// keeper ends with ctx, in wg).
func (c *ctrl) startWebhook(ctx context.Context, wg *sync.WaitGroup) (stop func(), err error) {
	wc := c.cfg.Webhook
	// A checker of its own: the loop pauses its checker while it
	// reconciles, which must not hold a review; same binary, user and
	// sandbox (or the checker process's lane of its own).
	checker, err := newChecker(c.cfg, rendergate.LaneWebhook)
	if err != nil {
		return nil, fmt.Errorf("webhook: %w", err)
	}
	a := newAdmitter(admitter{
		target: func() (*controller.Loop, []Watch) {
			p := c.pipeline()
			if p == nil {
				return nil, nil
			}
			return p.loop, p.current().Watches
		},
		gate: func(ctx context.Context, generation int64, spec map[string]any) error {
			_, _, err := c.gateWith(ctx, configObject{generation: generation, spec: spec}, checker)
			return err
		},
		configNamespace: c.cfg.Namespace,
		configName:      c.cfg.Name,
		checker:         checker,
		log:             c.log.With("component", "webhook"),
		m:               newAdmissionMetrics(c.reg),
	})
	var getCert func(*tls.ClientHelloInfo) (*tls.Certificate, error)
	if wc.CertDir != "" {
		getCert = newFileCerts(wc.CertDir, c.log.With("component", "webhook")).GetCertificate
	} else {
		sc := newSecretCerts(c.kube, c.cfg.Namespace, wc.Secret, wc.Hosts, wc.Configuration, c.log.With("component", "webhook"))
		sc.owner = c.configOwner
		getCert = sc.GetCertificate
		wg.Go(func() { _ = sc.run(ctx) })
	}
	mux := http.NewServeMux()
	mux.Handle("POST "+WebhookPath, a)
	return serveTLS(wc.Listen, mux, getCert, c.log)
}
