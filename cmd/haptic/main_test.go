package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/haptic-io/haptic/renderplan"
)

// run runs the app in process with args and returns stdout, stderr and
// the error Run returned.
func run(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	err := newApp(&stdout, &stderr).Run(append([]string{"haptic"}, args...))
	return stdout.String(), stderr.String(), err
}

const basicResources = "../../libraries/testdata/resources/basic"

func TestRenderWritesTheTreeAndPlan(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	stdout, stderr, err := run(t, "render", "-r", basicResources, "-o", out)
	if err != nil {
		t.Fatalf("render: %v\n%s", err, stderr)
	}
	if !regexp.MustCompile(`^rendered 7 files \(6 backends, 17 map entries\), 3 problems, plan [0-9a-f]{16} in \S+\n$`).MatchString(stdout) {
		t.Errorf("summary line: %q", stdout)
	}
	if n := strings.Count(stderr, "problem: Ingress shop/web-copy: MapKeyConflict"); n != 3 {
		t.Errorf("stderr has %d MapKeyConflict problems, want 3:\n%s", n, stderr)
	}
	got, err := os.ReadFile(filepath.Join(out, "haproxy.cfg"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("../../libraries/testdata/golden/basic/haproxy.cfg")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("haproxy.cfg differs from the library's golden file")
	}
	b, err := os.ReadFile(filepath.Join(out, planFile))
	if err != nil {
		t.Fatal(err)
	}
	plan, err := renderplan.Decode(b)
	if err != nil {
		t.Fatalf("plan.json: %v", err)
	}
	if !strings.Contains(stdout, "plan "+plan.ID()+" ") {
		t.Errorf("summary %q does not name plan %s", stdout, plan.ID())
	}
	for _, f := range plan.Files {
		if _, err := os.Stat(filepath.Join(out, f.Path)); err != nil {
			t.Errorf("plan file %s not written: %v", f.Path, err)
		}
	}
}

func TestRenderAgainRemovesFilesTheNewPlanDropped(t *testing.T) {
	out := t.TempDir()
	if _, stderr, err := run(t, "render", "-r", basicResources, "-o", out); err != nil {
		t.Fatalf("render: %v\n%s", err, stderr)
	}
	empty := t.TempDir()
	if _, stderr, err := run(t, "render", "-r", empty, "-o", out); err != nil {
		t.Fatalf("second render: %v\n%s", err, stderr)
	}
	if _, err := os.Stat(filepath.Join(out, "certs/shop_secure-tls.pem")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("stale certificate still there: %v", err)
	}
	if _, err := os.Stat(filepath.Join(out, "certs/crt-list.txt")); err != nil {
		t.Errorf("crt-list of the new render missing: %v", err)
	}
}

func TestRenderRefusesADirectoryItDidNotWrite(t *testing.T) {
	out := t.TempDir()
	if err := os.WriteFile(filepath.Join(out, "precious.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err := run(t, "render", "-r", basicResources, "-o", out)
	if err == nil || !strings.Contains(err.Error(), "holds no plan.json") {
		t.Fatalf("err = %v, want a refusal", err)
	}
	if _, err := os.Stat(filepath.Join(out, "precious.txt")); err != nil {
		t.Errorf("precious.txt: %v", err)
	}
}

func TestRenderMergesTheOperatorConfigLast(t *testing.T) {
	out := t.TempDir()
	if _, stderr, err := run(t, "render", "-c", "testdata/operator.yaml", "-r", basicResources, "-o", out); err != nil {
		t.Fatalf("render: %v\n%s", err, stderr)
	}
	b, err := os.ReadFile(filepath.Join(out, "haproxy.cfg"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "\n    bind 127.0.0.1:8081\n") {
		t.Error("operator's httpPort 8081 not applied")
	}
}

func TestRenderWithoutLibrariesNeedsAConfig(t *testing.T) {
	_, _, err := run(t, "render", "--libraries", "none", "-r", basicResources, "-o", t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "no config") {
		t.Fatalf("err = %v, want no config", err)
	}
	_, _, err = run(t, "render", "--libraries", "base,nope", "-r", basicResources, "-o", t.TempDir())
	if err == nil || !strings.Contains(err.Error(), `unknown library "nope"`) {
		t.Fatalf("err = %v, want unknown library", err)
	}
}

func TestValidatePassesOnTheStockLibraries(t *testing.T) {
	haproxy := haproxyForTests(t)
	stdout, _, err := run(t, "validate", "-c", "testdata/operator.yaml", "--haproxy", haproxy)
	if err != nil {
		t.Fatalf("validate: %v\n%s", err, stdout)
	}
	if !regexp.MustCompile(`(?m)^1[0-9] passed, 0 failed$`).MatchString(stdout) {
		t.Errorf("summary missing:\n%s", stdout)
	}
	if !strings.Contains(stdout, "PASS operator-port:") {
		t.Errorf("operator test not run:\n%s", stdout)
	}
}

func TestValidateFailsWithExitCode1(t *testing.T) {
	stdout, _, err := run(t, "validate", "-c", "testdata/failing.yaml", "--test", "operator-wrong-port", "--dump-rendered", "--trace-templates")
	var ec cli.ExitCoder
	if !errors.As(err, &ec) || ec.ExitCode() != 1 || exitCode(err) != 1 {
		t.Fatalf("err = %v, want an exit code 1", err)
	}
	for _, want := range []string{
		"FAIL operator-wrong-port: deliberately wrong\n",
		`assertion 0 (contains on haproxy.cfg): pattern "bind 127\\.0\\.0\\.1:1$" not found`,
		"  --- haproxy.cfg (config, ",
		"  trace haproxy.cfg ",
		"\n0 passed, 1 failed\n",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
}

func TestBenchmarkPrintsAParseableTable(t *testing.T) {
	stdout, _, err := run(t, "benchmark", "--objects", "10,20", "--iterations", "1")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if len(lines) != 3 {
		t.Fatalf("want a header and 2 rows:\n%s", stdout)
	}
	header := strings.Fields(lines[0])
	if header[0] != "objects" || header[1] != "total_ms" {
		t.Errorf("header: %q", lines[0])
	}
	for i, n := range []string{"10", "20"} {
		f := strings.Fields(lines[i+1])
		if len(f) != len(header) || f[0] != n {
			t.Errorf("row %d: %q", i, lines[i+1])
		}
		if f[len(f)-3] != n { // backends: one per Ingress in the mix
			t.Errorf("row %d: backends %s, want %s", i, f[len(f)-3], n)
		}
	}
}

func TestBenchmarkRejectsBadSizes(t *testing.T) {
	if _, _, err := run(t, "benchmark", "--objects", "0"); err == nil {
		t.Error("--objects 0 accepted")
	}
	if _, _, err := run(t, "benchmark", "--objects", "10", "--iterations", "0"); err == nil {
		t.Error("--iterations 0 accepted")
	}
}

func TestExitCodeIsTheExitCodersElseOne(t *testing.T) {
	if got := exitCode(cli.Exit("x", 3)); got != 3 {
		t.Errorf("exitCode(Exit 3) = %d", got)
	}
	if got := exitCode(errors.New("x")); got != 1 {
		t.Errorf("exitCode(plain) = %d", got)
	}
}
