package conformance_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/haptic-io/haptic/internal/testenv/minicluster"
)

// TestMain runs the test inside a private network namespace (as root; see
// minicluster.Main), then removes the haptic binary it built.
func TestMain(m *testing.M) {
	code := minicluster.Run(m)
	removeHaptic()
	os.Exit(code)
}

// The implementation as the report names it.
const (
	organization = "haproxy-haptic"
	project      = "haptic"
	projectURL   = "https://github.com/haptic-io/haptic"
	contact      = "https://github.com/haptic-io/haptic/issues"
	// gatewayClass is the GatewayClass the suite runs against.
	gatewayClass = "haptic"
	// configNamespace holds the controller's HAProxyTemplateConfig.
	configNamespace = "haptic-system"
)

// coreFeatures are the features of the GATEWAY-HTTP core tests.
var coreFeatures = []string{"Gateway", "HTTPRoute", "ReferenceGrant"}

// TestGatewayAPIConformance installs HAPTIC in the mini cluster and runs
// the official suite against it; it fails when the suite does. With
// HAPTIC_CONFORMANCE=full it runs the profiles GATEWAY-HTTP, GATEWAY-GRPC
// and GATEWAY-TLS with the GatewayClass's declared features and writes
// the report to HAPTIC_CONFORMANCE_REPORT (default: a file in the test's
// temporary directory); otherwise (core) the GATEWAY-HTTP core tests
// only. HAPTIC_CONFORMANCE_RUN names one test (the suite's --run-test);
// HAPTIC_CONFORMANCE_SKIP lists tests to skip (comma-separated; a skip
// needs its reason in reports/README.md); HAPTIC_CONFORMANCE_FEATURES
// replaces the features (--supported-features), to try a feature before
// the GatewayClass declares it.
func TestGatewayAPIConformance(t *testing.T) {
	begin := time.Now()
	mode := os.Getenv("HAPTIC_CONFORMANCE")
	if mode == "" {
		mode = "core"
	}
	if mode != "core" && mode != "full" {
		t.Fatalf("HAPTIC_CONFORMANCE=%q: want core or full", mode)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	e := startEnv(ctx, t)
	t.Logf("cluster up, CRDs installed, %v after start", time.Since(begin).Round(time.Millisecond))

	token := newToken(t)
	e.apply(ctx, t, strings.NewReplacer("__NS__", configNamespace, "__TOKEN__", token, "__CLASS__", gatewayClass).Replace(`
apiVersion: v1
kind: Namespace
metadata: {name: __NS__}
---
apiVersion: v1
kind: Secret
metadata: {name: haptic-agent-token, namespace: __NS__}
type: Opaque
stringData: {token: __TOKEN__}
---
apiVersion: haproxy-haptic.org/v1alpha1
kind: HAProxyTemplateConfig
metadata: {name: haptic, namespace: __NS__}
spec:
  libraries: [base, gateway]
  # Each fleet pod binds the listeners on every address of its network
  # namespace; unresolved backend shares answer 500 from 127.0.0.1:18999.
  extraContext: {httpAddress: 0.0.0.0, errorPort: 18999, statsSocket: stats.sock, hardStopAfter: 10s}
  podSelector: {matchLabels: {app.kubernetes.io/part-of: haptic}}
  agent: {port: 5555, tokenSecretRef: {name: haptic-agent-token, key: token}}
  # The suite expects a change served about a second after it first
  # answers: reloads are paced at 250 ms instead of the default 2 s.
  dataplane: {minDeploymentInterval: 250ms}
---
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: __CLASS__}
spec:
  controllerName: haproxy-haptic.org/gateway-controller
`))
	e.startController(t, configNamespace,
		"--gateway-replicas", "1",
		"--gateway-agent-image", "ghcr.io/haptic-io/haptic:conformance",
		"--gateway-haproxy-image", "docker.io/haproxytech/haproxy-debian:3.4")
	features := e.waitGatewayClassAccepted(ctx, t, gatewayClass)
	t.Logf("GatewayClass %s Accepted %v after start; supportedFeatures: %s", gatewayClass, time.Since(begin).Round(time.Millisecond), strings.Join(features, ","))

	args := []string{
		"-test.v", "-test.run", "^TestConformance$", "-test.timeout", "150m",
		"--gateway-class=" + gatewayClass,
		"--cleanup-base-resources=false",
		"--organization=" + organization, "--project=" + project, "--url=" + projectURL,
		"--version=" + gitVersion(t), "--contact=" + contact, "--mode=default",
	}
	report := ""
	if mode == "full" {
		report = os.Getenv("HAPTIC_CONFORMANCE_REPORT")
		if report == "" {
			report = filepath.Join(t.TempDir(), "report.yaml")
		}
		args = append(args, "--conformance-profiles=GATEWAY-HTTP,GATEWAY-GRPC,GATEWAY-TLS", "--report-output="+report)
	} else {
		args = append(args, "--supported-features="+strings.Join(coreFeatures, ","))
	}
	if fs := os.Getenv("HAPTIC_CONFORMANCE_FEATURES"); fs != "" {
		args = append(args, "--supported-features="+fs)
	}
	if run := os.Getenv("HAPTIC_CONFORMANCE_RUN"); run != "" {
		args = append(args, "--run-test="+run)
	}
	if skip := os.Getenv("HAPTIC_CONFORMANCE_SKIP"); skip != "" {
		args = append(args, "--skip-tests="+skip)
	}

	logPath := filepath.Join(e.Logs, "conformance.log")
	logf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, e.Bins.ConformanceTest, args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+e.KubeconfigPath)
	cmd.Stdout = io.MultiWriter(logf, &out)
	cmd.Stderr = cmd.Stdout
	suiteStart := time.Now()
	t.Logf("running %s %s", e.Bins.ConformanceTest, strings.Join(args, " "))
	runErr := cmd.Run()
	took := time.Since(suiteStart)

	results := parseResults(bytes.NewReader(out.Bytes()))
	counts := map[string]int{}
	var lines []string
	for _, r := range results {
		counts[r.Outcome]++
		lines = append(lines, fmt.Sprintf("%-4s %-60s %s", r.Outcome, r.Name, r.Took))
	}
	t.Logf("conformance (%s): %d passed, %d failed, %d skipped in %v (suite log: %s)\n%s",
		mode, counts["PASS"], counts["FAIL"], counts["SKIP"], took.Round(time.Second), logPath, strings.Join(lines, "\n"))
	if report != "" {
		t.Logf("report: %s", report)
	}
	if runErr != nil {
		t.Errorf("conformance.test: %v (last lines of %s:)\n%s", runErr, logPath, tail(logPath, 80))
	}
	if len(results) == 0 {
		t.Errorf("no test outcome in the suite's output")
	}
	t.Logf("total %v", time.Since(begin).Round(time.Second))
}
