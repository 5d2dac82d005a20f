package rendergate_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/haptic-io/haptic/rendergate"
	"github.com/haptic-io/haptic/renderplan"
)

// The tests in this file run the checker on a fake haproxy: a shell script
// that answers -v and otherwise runs haproxy.cfg as shell commands, so each
// test's "configuration" says what the process does. They test the process
// mechanics (tree, working directory, environment, user, namespace,
// output, exit codes, timeout) without HAProxy; the integration tests run
// the real one.

const fakeHAProxy = `#!/bin/sh
if [ "$1" = "-v" ]; then echo "HAProxy version 0.0-fake"; exit 0; fi
if [ "$*" != "-c -dr -f haproxy.cfg" ]; then echo "[ALERT]    (1) : fake: unexpected arguments: $*"; exit 9; fi
. ./haproxy.cfg
`

// fakeBinary writes the fake haproxy where any user can run it.
func fakeBinary(t *testing.T) string {
	t.Helper()
	dir := worldDir(t)
	bin := filepath.Join(dir, "haproxy")
	must(t, os.WriteFile(bin, []byte(fakeHAProxy), 0o755))
	return bin
}

// worldDir makes a directory any user can enter, removed at cleanup
// (t.TempDir is 0700, which the check user cannot enter).
func worldDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "rendergate-test-")
	must(t, err)
	must(t, os.Chmod(dir, 0o755))
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

func newChecker(t *testing.T, cfg rendergate.Config) *rendergate.HAProxyChecker {
	t.Helper()
	if cfg.Log == nil {
		cfg.Log = testLogger(t)
	}
	c, err := rendergate.NewHAProxyChecker(cfg)
	if err != nil {
		t.Fatalf("NewHAProxyChecker: %v", err)
	}
	return c
}

// checkScript checks an output whose haproxy.cfg is script.
func checkScript(t *testing.T, c renderplan.Checker, script string) error {
	t.Helper()
	return c.Check(context.Background(), textOutput(t, script))
}

// mustRefuse returns the CheckError of err, failing the test if there is none.
func mustRefuse(t *testing.T, err error) *rendergate.CheckError {
	t.Helper()
	var ce *rendergate.CheckError
	if !errors.As(err, &ce) {
		t.Fatalf("Check returned %v, want a *CheckError", err)
	}
	return ce
}

func TestCheckerPassesOnExitZeroEvenWithWarnings(t *testing.T) {
	c := newChecker(t, rendergate.Config{Binary: fakeBinary(t)})
	if err := checkScript(t, c, "echo '[WARNING]  (1) : something odd'; echo 'Warnings were found.'; exit 0"); err != nil {
		t.Fatalf("Check = %v, want nil", err)
	}
	if got := c.Version(); got != "HAProxy version 0.0-fake" {
		t.Fatalf("Version() = %q", got)
	}
}

func TestCheckerRefusalCarriesExitCodeAlertsAndOutput(t *testing.T) {
	c := newChecker(t, rendergate.Config{Binary: fakeBinary(t)})
	script := `echo "[NOTICE]   (7) : haproxy version is fake"
echo "[ALERT]    (7) : config : parsing [haproxy.cfg:3] : unknown keyword 'bogus' in 'global' section" >&2
echo "[ALERT]    (7) : config : Fatal errors found in configuration." >&2
exit 1`
	out := textOutput(t, script)
	err := c.Check(context.Background(), out)
	ce := mustRefuse(t, fmt.Errorf("wrapped: %w", err))
	want := &rendergate.CheckError{
		PlanID:   out.Plan.ID(),
		ExitCode: 1,
		Reason:   "config : parsing [haproxy.cfg:3] : unknown keyword 'bogus' in 'global' section",
		Alerts: []string{
			"[ALERT]    (7) : config : parsing [haproxy.cfg:3] : unknown keyword 'bogus' in 'global' section",
			"[ALERT]    (7) : config : Fatal errors found in configuration.",
		},
		Output: "[NOTICE]   (7) : haproxy version is fake\n" +
			"[ALERT]    (7) : config : parsing [haproxy.cfg:3] : unknown keyword 'bogus' in 'global' section\n" +
			"[ALERT]    (7) : config : Fatal errors found in configuration.\n",
	}
	if diff := cmp.Diff(want, ce); diff != "" {
		t.Fatalf("CheckError (-want +got):\n%s", diff)
	}
	wantMsg := "rendergate: plan " + out.Plan.ID() + " refused: config : parsing [haproxy.cfg:3] : unknown keyword 'bogus' in 'global' section"
	if err.Error() != wantMsg {
		t.Fatalf("Error() = %q, want %q", err.Error(), wantMsg)
	}
	if v := rendergate.VerdictOf(err); v != rendergate.VerdictRefused {
		t.Fatalf("VerdictOf = %v, want refused", v)
	}
}

func TestCheckerRefusalWithoutAlertsQuotesTheFirstLine(t *testing.T) {
	c := newChecker(t, rendergate.Config{Binary: fakeBinary(t)})
	ce := mustRefuse(t, checkScript(t, c, "echo; echo 'Configuration file has no error but will not start (no listener) => exit(2).'; exit 2"))
	if ce.ExitCode != 2 || ce.Reason != "Configuration file has no error but will not start (no listener) => exit(2)." || ce.Alerts != nil {
		t.Fatalf("CheckError = %+v", ce)
	}
}

func TestCheckerRunsInTheTreeWithAnEmptyEnvironment(t *testing.T) {
	t.Setenv("RENDERGATE_TEST_SECRET", "s3cret-token")
	c := newChecker(t, rendergate.Config{Binary: fakeBinary(t)})
	out := outputBuilder(t, "")
	must(t, out.File("certs/site.pem", renderplan.FileCert, []byte("PEM BODY\n"), false))
	o := build(t, out)
	// Replace the config by a script that shows its world, keeping the tree.
	o = withConfig(t, o, testCore, `echo "cwd=$(pwd)"; echo "env:"; env; echo "files:"; find . -type f | sort; cat maps/hosts.map certs/site.pem; exit 1
`)
	ce := mustRefuse(t, c.Check(context.Background(), o))
	for _, want := range []string{"./haproxy.cfg\n", "./maps/hosts.map\n", "./certs/site.pem\n", "app.example.com be_app\n", "PEM BODY\n", "/rendergate-"} {
		if !strings.Contains(ce.Output, want) {
			t.Errorf("output lacks %q:\n%s", want, ce.Output)
		}
	}
	for _, leak := range []string{"s3cret-token", "HOME=", "RENDERGATE_TEST_SECRET"} {
		if strings.Contains(ce.Output, leak) {
			t.Errorf("environment leaked %q into the check:\n%s", leak, ce.Output)
		}
	}
}

func TestCheckerRunsAsRootWhenNobodyCannotReachTheBinary(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the privilege drop applies only when the test runs as root")
	}
	dir := t.TempDir() // 0700: nobody cannot enter it
	bin := filepath.Join(dir, "haproxy")
	must(t, os.WriteFile(bin, []byte(fakeHAProxy), 0o755))
	c := newChecker(t, rendergate.Config{Binary: bin})
	if got := c.RunAs(); got != nil {
		t.Fatalf("RunAs() = %+v, want nil (the current user)", got)
	}
	ce := mustRefuse(t, checkScript(t, c, `echo "uid=$(id -u)"; exit 1`))
	if !strings.Contains(ce.Output, "uid=0\n") {
		t.Errorf("output lacks uid=0:\n%s", ce.Output)
	}
}

func TestCheckerRunsAsNobodyWhenRoot(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the privilege drop applies only when the test runs as root")
	}
	c := newChecker(t, rendergate.Config{Binary: fakeBinary(t)})
	if got := c.RunAs(); got == nil || *got != (rendergate.User{UID: rendergate.NobodyID, GID: rendergate.NobodyID}) {
		t.Fatalf("RunAs() = %+v, want nobody", got)
	}
	ce := mustRefuse(t, checkScript(t, c, `echo "ids=$(id -u):$(id -g):$(id -G)"; echo "tree=$(stat -c %u:%a . haproxy.cfg | tr '\n' ' ')"; exit 1`))
	for _, want := range []string{"ids=65534:65534:65534\n", "tree=65534:700 65534:600 \n"} {
		if !strings.Contains(ce.Output, want) {
			t.Errorf("output lacks %q:\n%s", want, ce.Output)
		}
	}
}

func TestCheckerRunsInItsOwnNetworkNamespace(t *testing.T) {
	c := newChecker(t, rendergate.Config{Binary: fakeBinary(t)})
	if !c.NetworkIsolated() {
		t.Skip("network namespaces are not available to this process; the checker runs without (see its warning)")
	}
	ours, err := os.Readlink("/proc/self/ns/net")
	must(t, err)
	ce := mustRefuse(t, checkScript(t, c, `echo "netns=$(readlink /proc/self/ns/net)"; echo "links=$(tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ' | tr '\n' ,)"; exit 1`))
	if !strings.Contains(ce.Output, "netns=net:[") || strings.Contains(ce.Output, "netns="+ours) {
		t.Fatalf("check ran in the controller's network namespace %s:\n%s", ours, ce.Output)
	}
	if !strings.Contains(ce.Output, "links=lo,\n") {
		t.Fatalf("check sees interfaces other than lo:\n%s", ce.Output)
	}
}

func TestCheckerCapsOutput(t *testing.T) {
	c := newChecker(t, rendergate.Config{Binary: fakeBinary(t), MaxOutput: 100})
	ce := mustRefuse(t, checkScript(t, c, `echo "[ALERT]    (1) : first"; i=0; while [ $i -lt 1000 ]; do echo "line $i"; i=$((i+1)); done; exit 1`))
	kept, note, _ := strings.Cut(ce.Output, "\n[rendergate: ")
	if len(kept) != 100 || !strings.HasPrefix(note, "") || !strings.Contains(ce.Output, "more bytes of output dropped]") {
		t.Fatalf("output (%d bytes kept) not capped at 100 with a note:\n%s", len(kept), ce.Output)
	}
	if ce.Reason != "first" {
		t.Fatalf("Reason = %q, want the first alert", ce.Reason)
	}
}

func TestCheckerKillsACheckThatOutlivesTheTimeout(t *testing.T) {
	c := newChecker(t, rendergate.Config{Binary: fakeBinary(t), Timeout: 300 * time.Millisecond})
	// A child in the background holds the output pipe open too: only a
	// kill of the whole process group ends both.
	ce := mustRefuse(t, checkScript(t, c, `sleep 120 & echo "bg=$!"; sleep 120`))
	if !ce.TimedOut || ce.ExitCode != -1 || !strings.Contains(ce.Reason, "did not finish within 300ms") {
		t.Fatalf("CheckError = %+v, want a timeout", ce)
	}
	var pid int
	if _, err := fmt.Sscanf(ce.Output, "bg=%d", &pid); err != nil {
		t.Fatalf("no background pid in output %q: %v", ce.Output, err)
	}
	// The SIGKILL is sent; wait (bounded) until the kernel has ended it.
	for i := 0; processAlive(pid); i++ {
		if i == 100 {
			t.Fatalf("background child %d of a timed-out check is still running", pid)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// processAlive says whether pid is a process that is neither gone nor a zombie.
func processAlive(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	_, rest, _ := strings.Cut(string(stat), ") ")
	return !strings.HasPrefix(rest, "Z") && !strings.HasPrefix(rest, "X")
}

func TestCheckerEndedByTheCallerGivesNoVerdict(t *testing.T) {
	c := newChecker(t, rendergate.Config{Binary: fakeBinary(t)})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := c.Check(ctx, textOutput(t, "exit 1"))
	if err == nil || rendergate.VerdictOf(err) != rendergate.VerdictUnknown || !errors.Is(err, context.Canceled) {
		t.Fatalf("Check with an ended context = %v, want a context.Canceled error of unknown verdict", err)
	}
}

func TestCheckerRemovesItsScratchTree(t *testing.T) {
	scratch := worldDir(t)
	c := newChecker(t, rendergate.Config{Binary: fakeBinary(t), ScratchDir: scratch})
	for _, script := range []string{"exit 0", "exit 1", "mkdir -p made/by/check && echo x > made/by/check/f && exit 1"} {
		_ = checkScript(t, c, script)
	}
	entries, err := os.ReadDir(scratch)
	must(t, err)
	if len(entries) != 0 {
		t.Fatalf("scratch dir keeps %d entries after the checks, e.g. %s", len(entries), entries[0].Name())
	}
}

func TestCheckerRefusesOutputsThatAreNotATree(t *testing.T) {
	c := newChecker(t, rendergate.Config{Binary: fakeBinary(t)})
	valid := textOutput(t, "exit 0")
	cfg := valid.Files[0]
	file := func(p string) renderplan.FileContent {
		return renderplan.FileContent{Path: p, Kind: renderplan.FileGeneral, Body: []byte("x")}
	}
	tests := map[string]struct {
		files []renderplan.FileContent
		want  string
	}{
		"a path climbing out":   {[]renderplan.FileContent{cfg, file("../escape")}, `file "../escape": path is not a clean path inside the tree`},
		"an absolute path":      {[]renderplan.FileContent{cfg, file("/etc/cron.d/x")}, `file "/etc/cron.d/x": path is not a clean path inside the tree`},
		"an unclean path":       {[]renderplan.FileContent{cfg, file("maps/../../x")}, `file "maps/../../x": path is not a clean path inside the tree`},
		"a path twice":          {[]renderplan.FileContent{cfg, file("a"), file("a")}, `file "a": path appears twice`},
		"a file as a directory": {[]renderplan.FileContent{cfg, file("a"), file("a/b")}, `file "a/b": its directory "a" is also a file`},
		"no haproxy.cfg":        {[]renderplan.FileContent{file("a")}, `output has no haproxy.cfg`},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			out := &renderplan.Output{Plan: valid.Plan, Files: tt.files}
			ce := mustRefuse(t, c.Check(context.Background(), out))
			if diff := cmp.Diff(&rendergate.CheckError{PlanID: valid.Plan.ID(), ExitCode: -1, Reason: tt.want}, ce); diff != "" {
				t.Fatalf("CheckError (-want +got):\n%s", diff)
			}
		})
	}
	if err := c.Check(context.Background(), &renderplan.Output{}); err == nil || rendergate.VerdictOf(err) != rendergate.VerdictUnknown {
		t.Fatalf("Check of an output without a plan = %v, want an error of unknown verdict", err)
	}
}

func TestNewHAProxyCheckerRefusesBadConfigs(t *testing.T) {
	bin := fakeBinary(t)
	notDir := filepath.Join(worldDir(t), "file")
	must(t, os.WriteFile(notDir, nil, 0o644))
	tests := map[string]struct {
		cfg  rendergate.Config
		want string
	}{
		"no binary":        {rendergate.Config{}, "Config.Binary is empty"},
		"missing binary":   {rendergate.Config{Binary: "/nonexistent/haproxy"}, "Config.Binary"},
		"negative timeout": {rendergate.Config{Binary: bin, Timeout: -1}, "Config.Timeout"},
		"negative output":  {rendergate.Config{Binary: bin, MaxOutput: -1}, "Config.MaxOutput"},
		"scratch missing":  {rendergate.Config{Binary: bin, ScratchDir: "/nonexistent"}, "Config.ScratchDir"},
		"scratch a file":   {rendergate.Config{Binary: bin, ScratchDir: notDir}, "Config.ScratchDir"},
	}
	if os.Geteuid() == 0 {
		// As root the check runs as nobody, who cannot enter a 0700 dir.
		tests["scratch closed to the check user"] = struct {
			cfg  rendergate.Config
			want string
		}{rendergate.Config{Binary: bin, ScratchDir: t.TempDir()}, "uid 65534"}
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := rendergate.NewHAProxyChecker(tt.cfg)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("NewHAProxyChecker = %v, want an error mentioning %q", err, tt.want)
			}
		})
	}
}
