package e2e_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/haptic-io/haptic/internal/testenv/syncbuf"
)

// webhookSnippet lets the annotation haptic.test/deny-from of each
// Ingress reach haproxy.cfg as one word: whether it is a network only
// HAProxy knows, so a bad one is what only haproxy -c finds.
const webhookSnippet = `  snippets:
    base-frontend-http-zz-deny-from:
      template: |
        {{- range .resources.ingresses.List }}{{ with index .metadata "annotations" }}{{ with index . "haptic.test/deny-from" }}{{ if regexMatch "^[0-9a-fA-F.:/]+$" . }}
            http-request deny if { src {{ . }} }
        {{- end }}{{ end }}{{ end }}{{ end }}
`

// TestWebhookRefusesABadIngressAtCreateTime registers the controller's
// webhook (its own CA, the caBundle patched by the controller, the checks
// in a `haptic checker` process) and creates Ingresses through the
// apiserver: a bad one is refused with the problem in the apiserver's
// answer, a good one is admitted, and with the controller down
// failurePolicy Ignore admits.
func TestWebhookRefusesABadIngressAtCreateTime(t *testing.T) {
	c := startCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	t.Cleanup(cancel)
	ns, app := "haptic", "shop"
	c.createNamespace(ctx, t, app)
	c.deployHAProxy(ctx, t, ns, 1)
	c.installCRDs(ctx, t)
	c.applyConfig(ctx, t, ns, webhookSnippet)
	c.deployEcho(ctx, t, app, "echo")

	// The checker: haproxy -c of every review in a process of its own.
	dir, err := os.MkdirTemp("", "haptic-checker-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	_ = os.Chmod(dir, 0o755)
	sock := filepath.Join(dir, "check.sock")
	checker := exec.Command(c.Haptic, "checker", "--socket", sock, "--haproxy", c.HAProxy, "--scratch-dir", dir)
	var checkerLog syncbuf.Buffer
	checker.Stdout, checker.Stderr = &checkerLog, &checkerLog
	if err := checker.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = checker.Process.Kill()
		_ = checker.Wait()
		if t.Failed() {
			t.Logf("checker log:\n%s", checkerLog.String())
		}
	})

	listen := freePort(t)
	const vwcName = "haptic-webhook"
	ignore, none := admissionregistrationv1.Ignore, admissionregistrationv1.SideEffectClassNone
	url := "https://" + listen + "/validate"
	timeout := int32(10)
	vwc := &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: vwcName},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name:                    "ingresses.haproxy-haptic.org",
			AdmissionReviewVersions: []string{"v1"},
			SideEffects:             &none,
			FailurePolicy:           &ignore,
			TimeoutSeconds:          &timeout,
			ClientConfig:            admissionregistrationv1.WebhookClientConfig{URL: &url},
			Rules: []admissionregistrationv1.RuleWithOperations{{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
				Rule: admissionregistrationv1.Rule{APIGroups: []string{"networking.k8s.io"}, APIVersions: []string{"v1"},
					Resources: []string{"ingresses"}},
			}},
		}},
	}
	if _, err := c.Client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, vwc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	host, _, _ := strings.Cut(listen, ":")
	ctl := c.startController(ctx, t, ns, "controller-0", "--leader-elect=false", "--checker-socket", sock,
		"--webhook-listen", listen, "--webhook-secret", "haptic-webhook-tls", "--webhook-cert-hosts", host,
		"--webhook-configuration", vwcName)

	poll(ctx, t, "the controller patched its CA into the caBundle", func() (bool, string) {
		v, err := c.Client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(ctx, vwcName, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return len(v.Webhooks[0].ClientConfig.CABundle) > 0, "no caBundle yet"
	})
	ings := c.Client.NetworkingV1().Ingresses(app)
	good := echoIngress(app, "shop.example", "echo")
	good.Name = "shop"
	bad := echoIngress(app, "bad.example", "echo")
	bad.Name = "bad"
	bad.Annotations = map[string]string{"haptic.test/deny-from": "10.0.0.0/33"}

	// Until the controller has rendered its world the review cannot judge
	// (and Ignore admits): ask with dry runs until it refuses.
	var refusal string
	poll(ctx, t, "the webhook refuses the bad Ingress", func() (bool, string) {
		_, err := ings.Create(ctx, bad, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err == nil {
			return false, "admitted"
		}
		refusal = err.Error()
		return strings.Contains(refusal, "denied the request"), refusal
	})
	if _, err := ings.Create(ctx, bad, metav1.CreateOptions{}); err == nil {
		t.Fatal("the bad Ingress was created")
	} else {
		refusal = err.Error()
	}
	t.Logf("refusal: %s", refusal)
	for _, want := range []string{`admission webhook "ingresses.haproxy-haptic.org" denied the request`,
		"HAPTIC refuses Ingress shop/bad", "HAProxy refuses the configuration", "10.0.0.0/33", "haproxy.cfg:"} {
		if !strings.Contains(refusal, want) {
			t.Errorf("the refusal does not say %q:\n%s", want, refusal)
		}
	}

	if _, err := ings.Create(ctx, good, metav1.CreateOptions{}); err != nil {
		t.Fatalf("the good Ingress was refused: %v", err)
	}
	// A per-object problem: a host an older Ingress serves.
	// Another backend: the same host and path to the same Service is no
	// conflict.
	thief := echoIngress(app, "shop.example", "other")
	thief.Name = "thief"
	poll(ctx, t, "the webhook refuses a second Ingress for the same host", func() (bool, string) {
		_, err := ings.Create(ctx, thief, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err == nil {
			return false, "admitted (the controller may not have seen shop yet)"
		}
		refusal = err.Error()
		return true, refusal
	})
	for _, want := range []string{"HAPTIC refuses Ingress shop/thief", "MapKeyConflict"} {
		if !strings.Contains(refusal, want) {
			t.Errorf("the host conflict's refusal does not say %q:\n%s", want, refusal)
		}
	}

	// The controller down: failurePolicy Ignore admits, unchecked.
	ctl.kill()
	late := bad.DeepCopy()
	late.Name = "bad-while-down"
	if _, err := ings.Create(ctx, late, metav1.CreateOptions{}); err != nil {
		t.Fatalf("with the controller down and failurePolicy Ignore, the Ingress was refused: %v", err)
	}
	var stored *networkingv1.Ingress
	if stored, err = ings.Get(ctx, late.Name, metav1.GetOptions{}); err != nil || stored.Annotations["haptic.test/deny-from"] != "10.0.0.0/33" {
		t.Fatalf("the Ingress admitted while the controller was down is not stored: %v", err)
	}
}
