package conformance_test

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/haptic-io/haptic/internal/haproxytest"
	"github.com/haptic-io/haptic/internal/testenv/minicluster"
	"github.com/haptic-io/haptic/internal/testenv/minicluster/kubelet"
)

var (
	gatewayClassGVR = schema.GroupVersionResource{Group: "gateway.networking.k8s.io", Version: "v1", Resource: "gatewayclasses"}
)

// env is the mini cluster with HAPTIC installed: its CRDs, the
// HAProxyTemplateConfig of the gateway library, the GatewayClass and the
// controller.
type env struct {
	*minicluster.Cluster
	Bins    minicluster.Binaries
	Client  kubernetes.Interface
	Dynamic dynamic.Interface
	HAProxy string
	Haptic  string
	// Logs is where the controller's and the suite's output go.
	Logs string
}

// startEnv starts the cluster and its kubelet (HAPTIC's images mapped to
// HAProxy 3.4 and the haptic binary built from this module, echo-basic to
// the conformance backend), installs the CRDs (Gateway API experimental
// channel, HAPTIC's) and returns.
func startEnv(ctx context.Context, t *testing.T) *env {
	t.Helper()
	minicluster.RequireT(t)
	haproxy := haproxytest.Binary(t, "3.4")
	haptic := buildHaptic(t)
	mc, bins := minicluster.StartT(t)
	if _, err := os.Stat(bins.GatewayExperimentalCRDDir); err != nil {
		t.Fatalf("no experimental-channel CRDs (run make minicluster): %v", err)
	}
	cs, err := kubernetes.NewForConfig(mc.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(mc.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	logs := os.Getenv("HAPTIC_CONFORMANCE_LOGS")
	if logs == "" {
		logs = t.TempDir()
	} else if err := os.MkdirAll(logs, 0o755); err != nil {
		t.Fatal(err)
	}
	images := kubelet.HAPTICImages(haproxy, haptic)
	maps.Copy(images, kubelet.ConformanceImages(bins.EchoBasic))
	kubelet.StartT(t, kubelet.Config{
		Client:         cs,
		Dir:            filepath.Join(t.TempDir(), "pods"),
		Images:         images,
		ServingCertPEM: mc.PKI.Kubelet.CertPEM,
		ServingKeyPEM:  mc.PKI.Kubelet.KeyPEM,
	})
	e := &env{Cluster: mc, Bins: bins, Client: cs, Dynamic: dyn, HAProxy: haproxy, Haptic: haptic, Logs: logs}
	if err := minicluster.InstallGatewayCRDs(ctx, mc.RESTConfig(), bins.GatewayExperimentalCRDDir); err != nil {
		t.Fatal(err)
	}
	e.installHapticCRDs(ctx, t)
	return e
}

// installHapticCRDs applies config/crd/bases and waits until each CRD is
// Established.
func (e *env) installHapticCRDs(ctx context.Context, t *testing.T) {
	t.Helper()
	if err := minicluster.InstallCRDs(ctx, e.RESTConfig(), filepath.Join(moduleRoot(t), "config", "crd", "bases", "*.yaml")); err != nil {
		t.Fatal(err)
	}
}

// apply applies YAML documents.
func (e *env) apply(ctx context.Context, t *testing.T, manifests string) {
	t.Helper()
	objs, err := minicluster.SplitManifests([]byte(manifests))
	if err != nil {
		t.Fatal(err)
	}
	if err := minicluster.Apply(ctx, e.RESTConfig(), objs); err != nil {
		t.Fatal(err)
	}
}

// newToken returns a random agent token.
func newToken(t *testing.T) string {
	t.Helper()
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// controller is `haptic controller` running as a process of the test.
type controller struct {
	cmd  *exec.Cmd
	done chan struct{}
}

// startController starts the controller for the config ns/haptic, alone
// (no leader election), logging to <Logs>/controller.log.
func (e *env) startController(t *testing.T, ns string, args ...string) *controller {
	t.Helper()
	// The gate's haproxy -c runs as nobody: its scratch directory must be
	// reachable by nobody, which t.TempDir's parent is not.
	scratch, err := os.MkdirTemp("", "haptic-gate-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(scratch) })
	_ = os.Chmod(scratch, 0o755)
	logPath := filepath.Join(e.Logs, "controller.log")
	logf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	all := append([]string{"controller",
		"--kubeconfig", e.KubeconfigPath, "--namespace", ns, "--config-name", "haptic", "--identity", "conformance",
		"--haproxy", e.HAProxy, "--scratch-dir", scratch, "--listen", "127.0.0.1:19180", "--leader-elect=false",
		"--log-level", "debug"}, args...)
	c := &controller{cmd: exec.Command(e.Haptic, all...), done: make(chan struct{})}
	c.cmd.Stdout, c.cmd.Stderr = logf, logf
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		_ = c.cmd.Wait()
		_ = logf.Close()
		close(c.done)
	}()
	t.Cleanup(func() {
		_ = c.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-c.done:
		case <-time.After(10 * time.Second):
			_ = c.cmd.Process.Kill()
			<-c.done
		}
		if t.Failed() {
			t.Logf("controller log: %s (last lines:)\n%s", logPath, tail(logPath, 60))
		}
	})
	return c
}

// waitGatewayClassAccepted waits until the GatewayClass name is Accepted
// and lists its supported features.
func (e *env) waitGatewayClassAccepted(ctx context.Context, t *testing.T, name string) []string {
	t.Helper()
	var features []string
	waitFor(ctx, t, "GatewayClass "+name+" Accepted", 2*time.Minute, func() (bool, string) {
		u, err := e.Dynamic.Resource(gatewayClassGVR).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		fs, _, _ := unstructured.NestedSlice(u.Object, "status", "supportedFeatures")
		features = features[:0]
		for _, f := range fs {
			if m, ok := f.(map[string]any); ok {
				n, _ := m["name"].(string)
				features = append(features, n)
			}
		}
		st, _, _ := unstructured.NestedFieldNoCopy(u.Object, "status")
		return conditionTrue(u, "Accepted"), fmt.Sprintf("status %v", st)
	})
	slices.Sort(features)
	return features
}

func conditionTrue(u *unstructured.Unstructured, typ string) bool {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == typ && m["status"] == "True" {
			return true
		}
	}
	return false
}

func waitFor(ctx context.Context, t *testing.T, what string, timeout time.Duration, f func() (bool, string)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		ok, state := f()
		if ok {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("timed out waiting for %s; last state: %s", what, state)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// hapticBuild is the haptic binary built once per test binary.
var hapticBuild struct {
	once      sync.Once
	dir, path string
	err       error
}

func buildHaptic(t *testing.T) string {
	t.Helper()
	hapticBuild.once.Do(func() {
		if hapticBuild.dir, hapticBuild.err = os.MkdirTemp("", "haptic-conformance-"); hapticBuild.err != nil {
			return
		}
		hapticBuild.path = filepath.Join(hapticBuild.dir, "haptic")
		cmd := exec.Command("go", "build", "-o", hapticBuild.dir+"/", "./cmd/haptic", "./cmd/haptic-agent")
		cmd.Dir = moduleRoot(t)
		if out, err := cmd.CombinedOutput(); err != nil {
			hapticBuild.err = fmt.Errorf("go build ./cmd/haptic ./cmd/haptic-agent: %w\n%s", err, out)
		}
	})
	if hapticBuild.err != nil {
		t.Fatal(hapticBuild.err)
	}
	return hapticBuild.path
}

func removeHaptic() {
	if hapticBuild.dir != "" {
		_ = os.RemoveAll(hapticBuild.dir)
	}
}

// moduleRoot is the directory of go.mod above the working directory.
func moduleRoot(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			t.Fatalf("no go.mod above %s", wd)
		}
	}
}

// gitVersion is the commit the run tests: HAPTIC_CONFORMANCE_VERSION, else
// `git describe --always --dirty --abbrev=12`.
func gitVersion(t *testing.T) string {
	t.Helper()
	if v := os.Getenv("HAPTIC_CONFORMANCE_VERSION"); v != "" {
		return v
	}
	cmd := exec.Command("git", "describe", "--always", "--dirty", "--abbrev=12")
	cmd.Dir = moduleRoot(t)
	out, err := cmd.Output()
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(out))
}

// result is one conformance test's outcome as go test printed it.
type result struct {
	Name, Outcome string // PASS, FAIL or SKIP
	Took          string
}

var resultLine = regexp.MustCompile(`^\s*--- (PASS|FAIL|SKIP): TestConformance/([A-Za-z0-9]+) \(([0-9.]+s)\)`)

// parseResults reads the top-level subtest outcomes of the suite's output.
func parseResults(r io.Reader) []result {
	var out []result
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if m := resultLine.FindStringSubmatch(sc.Text()); m != nil {
			out = append(out, result{Name: m[2], Outcome: m[1], Took: m[3]})
		}
	}
	return out
}

// tail returns the last n lines of a file.
func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
