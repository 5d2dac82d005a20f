package e2e_test

import (
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/haptic-io/haptic/agentapi"
	"github.com/haptic-io/haptic/internal/testenv/minicluster"
	"github.com/haptic-io/haptic/internal/testenv/syncbuf"
)

var (
	configGVR = schema.GroupVersionResource{Group: "haproxy-haptic.org", Version: "v1alpha1", Resource: "haproxytemplateconfigs"}
	outputGVR = schema.GroupVersionResource{Group: "haproxy-haptic.org", Version: "v1alpha1", Resource: "haproxycfgs"}
)

// installCRDs applies HAPTIC's CRDs (config/crd/bases) and waits until
// the apiserver serves them.
func (c *cluster) installCRDs(ctx context.Context, t testing.TB) {
	t.Helper()
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	if err := minicluster.InstallCRDs(ctx, c.RESTConfig(), filepath.Join(root, "config", "crd", "bases", "*.yaml")); err != nil {
		t.Fatal(err)
	}
}

// applyConfig creates or replaces the HAProxyTemplateConfig "haptic" in ns
// with the stock libraries, the pods' extraContext, the HAProxy pods of
// testdata/haproxy-deployment.yaml and their token Secret; extra is YAML
// merged into spec (a test's validation tests, a broken template).
func (c *cluster) applyConfig(ctx context.Context, t testing.TB, ns, extraSpec string) {
	t.Helper()
	objs, err := minicluster.SplitManifests([]byte(strings.ReplaceAll(`
apiVersion: haproxy-haptic.org/v1alpha1
kind: HAProxyTemplateConfig
metadata: {name: haptic, namespace: __NS__}
spec:
  libraries: [base, ingress]
  extraContext: {ingressClass: haptic, httpAddress: 0.0.0.0, httpPort: 80, httpsPort: 0, statsSocket: stats.sock, hardStopAfter: 10s}
  podSelector: {matchLabels: {app.kubernetes.io/name: haptic-haproxy}}
  agent: {port: 5555, tokenSecretRef: {name: haptic-agent-token, key: token}}
`+extraSpec, "__NS__", ns)))
	if err != nil {
		t.Fatal(err)
	}
	if err := minicluster.Apply(ctx, c.RESTConfig(), objs); err != nil {
		t.Fatal(err)
	}
}

// configCondition returns the status, reason, message and observed
// generation of the config's condition typ.
func (c *cluster) configCondition(ctx context.Context, ns, typ string) (status, reason, message string, observed, generation int64) {
	u, err := c.Dynamic.Resource(configGVR).Namespace(ns).Get(ctx, "haptic", metav1.GetOptions{})
	if err != nil {
		return "", "", err.Error(), 0, 0
	}
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, cd := range conds {
		m, _ := cd.(map[string]any)
		if m["type"] == typ {
			s, _ := m["status"].(string)
			r, _ := m["reason"].(string)
			msg, _ := m["message"].(string)
			og, _ := m["observedGeneration"].(int64)
			return s, r, msg, og, u.GetGeneration()
		}
	}
	return "", "", "no condition " + typ, 0, u.GetGeneration()
}

// controllerProc is `haptic controller` running as a process of the test,
// with a kubeconfig, in the cluster's network namespace.
type controllerProc struct {
	name   string
	cmd    *exec.Cmd
	listen string
	log    *syncbuf.Buffer
	done   chan struct{}
}

// startController starts `haptic controller` for the config "haptic" in
// ns with short leader-election timings; extra flags follow the others.
// Its log (debug level) is kept in memory and shown when the test fails;
// HAPTIC_E2E_CONTROLLER_LOGS names a directory to write it to, as
// <identity>.log, when the test ends.
func (c *cluster) startController(ctx context.Context, t testing.TB, ns, identity string, extra ...string) *controllerProc {
	t.Helper()
	listen := freePort(t)
	// The gate's haproxy -c runs as nobody: its scratch directory must be
	// reachable by nobody, which t.TempDir's parent is not.
	scratch, err := os.MkdirTemp("", "haptic-gate-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(scratch) })
	_ = os.Chmod(scratch, 0o755)
	args := []string{"controller",
		"--kubeconfig", c.KubeconfigPath, "--namespace", ns, "--config-name", "haptic", "--identity", identity,
		"--haproxy", c.HAProxy, "--scratch-dir", scratch, "--listen", listen,
		"--lease-duration", "4s", "--renew-deadline", "3s", "--retry-period", "500ms", "--log-level", "debug"}
	args = append(args, extra...)
	p := &controllerProc{name: identity, listen: listen, log: &syncbuf.Buffer{}, done: make(chan struct{})}
	p.cmd = exec.Command(c.Haptic, args...)
	p.cmd.Stdout, p.cmd.Stderr = p.log, p.log
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		_ = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		p.kill()
		if t.Failed() {
			t.Logf("controller %s log:\n%s", p.name, p.log.String())
		}
		if dir := os.Getenv("HAPTIC_E2E_CONTROLLER_LOGS"); dir != "" {
			path := filepath.Join(dir, p.name+".log")
			if err := os.WriteFile(path, []byte(p.log.String()), 0o644); err != nil {
				t.Logf("controller %s log: %v", p.name, err)
			}
		}
	})
	return p
}

// kill ends the controller at once (SIGKILL: no lease release).
func (p *controllerProc) kill() {
	_ = p.cmd.Process.Signal(syscall.SIGCONT)
	_ = p.cmd.Process.Kill()
	<-p.done
}

func (p *controllerProc) pause()  { _ = p.cmd.Process.Signal(syscall.SIGSTOP) }
func (p *controllerProc) resume() { _ = p.cmd.Process.Signal(syscall.SIGCONT) }

// ready reports whether /readyz answers 200, and its body.
func (p *controllerProc) ready(ctx context.Context) (bool, string) {
	code, body, err := get(ctx, "http://"+p.listen+"/readyz", "")
	if err != nil {
		return false, err.Error()
	}
	return code == 200, strings.TrimSpace(body)
}

func freePort(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func asNack(err error, nack **agentapi.NackError) bool { return errors.As(err, nack) }
