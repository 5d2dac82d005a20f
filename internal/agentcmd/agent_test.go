package agentcmd

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/haptic-io/haptic/agentapi"
	"github.com/haptic-io/haptic/haproxysock"
	"github.com/haptic-io/haptic/internal/haproxytest"
	"github.com/haptic-io/haptic/internal/testenv/syncbuf"
)

// agentApp is an app with only the agent command, run in process.
func agentApp(stdout, stderr io.Writer) *cli.App {
	return &cli.App{Name: "haptic", Commands: []*cli.Command{Command()}, Writer: stdout, ErrWriter: stderr,
		ExitErrHandler: func(*cli.Context, error) {}}
}

func TestAgentCommandRefusesToServeWithoutATokenFile(t *testing.T) {
	var out, errOut bytes.Buffer
	err := agentApp(&out, &errOut).Run([]string{"haptic", "agent", "--base-dir", t.TempDir(), "--master-socket", "/m", "--stats-socket", "/s"})
	if err == nil || exitCode(err) != 2 || !strings.Contains(err.Error(), "--token-file is required") {
		t.Fatalf("error %v (exit %d), want exit 2 asking for --token-file", err, exitCode(err))
	}
}

func TestAgentCommandSupervisesHAProxyAndPrintsItsState(t *testing.T) {
	bin := haproxytest.Binary(t, "3.4")
	dir, err := os.MkdirTemp("", "hxc-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	tokenFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte("cli-test-token-0123456789\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	apiPort, httpPort := haproxytest.FreePort(t), haproxytest.FreePort(t)
	url := fmt.Sprintf("http://127.0.0.1:%d", apiPort)
	ctx, cancel := context.WithCancel(context.Background())
	// The agent's log and HAProxy's output share the error writer.
	var out, errOut syncbuf.Buffer
	var runErr error
	var wg sync.WaitGroup
	wg.Go(func() {
		runErr = agentApp(&out, &errOut).RunContext(ctx, []string{"haptic", "agent",
			"--base-dir", filepath.Join(dir, "base"), "--master-socket", filepath.Join(dir, "master.sock"),
			"--stats-socket", filepath.Join(dir, "stats.sock"), "--listen", fmt.Sprintf("127.0.0.1:%d", apiPort),
			"--token-file", tokenFile, "--haproxy-binary", bin, "--bootstrap-bind", fmt.Sprintf("127.0.0.1:%d", httpPort),
			"--drift-interval", "-1s"})
	})
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			cancel()
			wg.Wait()
		}
	}
	t.Cleanup(stop)
	deadline := time.Now().Add(15 * time.Second)
	for {
		resp, err := http.Get(url + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				break
			}
		}
		if time.Now().After(deadline) {
			stop()
			t.Fatalf("agent not ready: %v\nstderr:\n%s", err, errOut.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if code, _ := haproxytest.Get(t, fmt.Sprintf("http://127.0.0.1:%d/", httpPort), ""); code != 503 {
		t.Errorf("bootstrap frontend answered %d, want 503", code)
	}
	var sOut, sErr bytes.Buffer
	if err := agentApp(&sOut, &sErr).Run([]string{"haptic", "agent", "state", "--url", url, "--token-file", tokenFile}); err != nil {
		t.Fatalf("agent state: %v\n%s", err, sErr.String())
	}
	for _, want := range []string{"applied plan:    (none)", "haproxy:         3.4", "drifted:         false"} {
		if !strings.Contains(sOut.String(), want) {
			t.Errorf("agent state output lacks %q:\n%s", want, sOut.String())
		}
	}
	if err := agentApp(&sOut, &sErr).Run([]string{"haptic", "agent", "state", "--url", url}); err == nil || !strings.Contains(err.Error(), "401") {
		t.Errorf("agent state without a token: %v, want a 401", err)
	}
	stop()
	if runErr != nil {
		t.Errorf("agent returned %v", runErr)
	}
}

func TestAgentBootstrapWritesTheConfigOnceAndLeavesACommittedOne(t *testing.T) {
	base := filepath.Join(t.TempDir(), "tree")
	args := []string{"haptic", "agent", "bootstrap", "--base-dir", base, "--stats-socket", "stats.sock", "--bind", "0.0.0.0:80", "--bind", "[::]:80"}
	var out, errOut bytes.Buffer
	if err := agentApp(&out, &errOut).Run(args); err != nil {
		t.Fatalf("bootstrap: %v (%s)", err, errOut.String())
	}
	cfg, err := os.ReadFile(filepath.Join(base, "haproxy.cfg"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"stats socket unix@stats.sock mode 600 level admin", "bind 0.0.0.0:80\n", "bind [::]:80\n", "return status 503"} {
		if !strings.Contains(string(cfg), want) {
			t.Errorf("bootstrap haproxy.cfg lacks %q:\n%s", want, cfg)
		}
	}
	if err := os.WriteFile(filepath.Join(base, "haproxy.cfg"), []byte("committed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if err := agentApp(&out, &errOut).Run(args); err != nil {
		t.Fatalf("second bootstrap: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(base, "haproxy.cfg")); string(b) != "committed\n" || !strings.Contains(out.String(), "left as it is") {
		t.Fatalf("after a second bootstrap: haproxy.cfg %q, output %q; want it untouched and said so", b, out.String())
	}
	if err := agentApp(&out, &errOut).Run([]string{"haptic", "agent", "bootstrap", "--base-dir", base}); err == nil {
		t.Fatal("bootstrap without --stats-socket succeeded")
	}
}
func TestAgentListenNeverPicksEveryInterfaceOnItsOwn(t *testing.T) {
	cases := []struct {
		flag, podIP string
		want        string
		warns, fail bool
	}{
		{"", "", "127.0.0.1:5555", true, false},
		{"", "10.0.0.7", "10.0.0.7:5555", false, false},
		{"", "fd00::7", "[fd00::7]:5555", false, false},
		{"", "not-an-ip", "", false, true},
		{"10.0.0.7:6000", "10.0.0.8", "10.0.0.7:6000", false, false},
		{":5555", "", ":5555", true, false},
		{"0.0.0.0:5555", "", "0.0.0.0:5555", true, false},
		{"[::]:5555", "", "[::]:5555", true, false},
		{"5555", "", "", false, true},
	}
	for _, tc := range cases {
		got, note, err := agentListen(tc.flag, tc.podIP)
		if (err != nil) != tc.fail || got != tc.want || (note != "") != tc.warns {
			t.Errorf("agentListen(%q, %q) = %q, note %q, %v; want %q, a note: %v, an error: %v", tc.flag, tc.podIP, got, note, err, tc.want, tc.warns, tc.fail)
		}
	}
}

func TestAgentServerTimeoutsComeFromTheFlags(t *testing.T) {
	parse := func(args ...string) agentOptions {
		t.Helper()
		var o agentOptions
		cmd := Command()
		cmd.Action = func(c *cli.Context) error {
			var err error
			o, err = agentOptionsFrom(c)
			return err
		}
		app := &cli.App{Name: "haptic", Commands: []*cli.Command{cmd}, Writer: io.Discard, ErrWriter: io.Discard, ExitErrHandler: func(*cli.Context, error) {}}
		base := []string{"haptic", "agent", "--base-dir", t.TempDir(), "--master-socket", "/m", "--stats-socket", "/s", "--insecure-no-auth", "--listen", "127.0.0.1:0"}
		if err := app.Run(append(base, args...)); err != nil {
			t.Fatal(err)
		}
		return o
	}
	o := parse()
	srv := agentServer(http.NotFoundHandler(), o)
	if srv.ReadHeaderTimeout != 10*time.Second || srv.IdleTimeout != 2*time.Minute || srv.WriteTimeout != 0 ||
		o.readTimeout != agentapi.DefaultReadTimeout || o.minReadRate != agentapi.DefaultMinReadRate {
		t.Errorf("defaults: header %v, idle %v, write %v, read %v, rate %d", srv.ReadHeaderTimeout, srv.IdleTimeout, srv.WriteTimeout, o.readTimeout, o.minReadRate)
	}
	o = parse("--read-header-timeout", "3s", "--idle-timeout", "30s", "--read-timeout", "5s", "--min-read-rate", "256")
	srv = agentServer(http.NotFoundHandler(), o)
	if srv.ReadHeaderTimeout != 3*time.Second || srv.IdleTimeout != 30*time.Second || o.readTimeout != 5*time.Second || o.minReadRate != 256<<10 {
		t.Errorf("flags: header %v, idle %v, read %v, rate %d", srv.ReadHeaderTimeout, srv.IdleTimeout, o.readTimeout, o.minReadRate)
	}
}

// TestAKilledAgentTakesItsHAProxyAlongAndASecondIsRefused runs
// `haptic-agent --haproxy-binary` (Main) as a child process: a second agent on its base
// directory is refused with an error naming it, and once it is killed
// (SIGKILL) the HAProxy it supervised ends too.
func TestAKilledAgentTakesItsHAProxyAlongAndASecondIsRefused(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("HAProxy follows a killed supervisor through PR_SET_PDEATHSIG, which is Linux's")
	}
	bin := haproxytest.Binary(t, "3.4")
	dir, err := os.MkdirTemp("", "hxk-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	apiPort, httpPort := haproxytest.FreePort(t), haproxytest.FreePort(t)
	args := []string{"--base-dir", filepath.Join(dir, "base"), "--master-socket", filepath.Join(dir, "master.sock"),
		"--stats-socket", filepath.Join(dir, "stats.sock"), "--listen", fmt.Sprintf("127.0.0.1:%d", apiPort), "--insecure-no-auth",
		"--haproxy-binary", bin, "--bootstrap-bind", fmt.Sprintf("127.0.0.1:%d", httpPort), "--drift-interval", "-1s"}
	var childErr syncbuf.Buffer
	child := exec.Command(os.Args[0], args...)
	child.Env = append(os.Environ(), childEnv+"=1")
	child.Stdout, child.Stderr = &childErr, &childErr
	child.WaitDelay = time.Second // HAProxy shares the child's output pipe
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = child.Process.Kill()
		_ = child.Wait()
		if t.Failed() {
			t.Logf("the child agent's output:\n%s", childErr.String())
		}
	})
	waitHTTP(t, fmt.Sprintf("http://127.0.0.1:%d/readyz", apiPort), 200)
	procs, err := (&haproxysock.Master{Path: filepath.Join(dir, "master.sock"), Timeout: 5 * time.Second}).ShowProc(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	worker, _ := procs.Serving()

	second := append([]string{"haptic", "agent"}, args...)
	second[slices.Index(second, "--listen")+1] = "127.0.0.1:0"
	var out, errOut bytes.Buffer
	err = agentApp(&out, &errOut).Run(second)
	if want := fmt.Sprintf("is locked by process %d", child.Process.Pid); err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("a second agent on the base dir: %v; want %q", err, want)
	}
	t.Logf("a second agent on the base dir: %v", err)

	if err := child.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = child.Wait()
	for _, pid := range []int{procs.Master.PID, worker.PID} {
		deadline := time.Now().Add(15 * time.Second)
		for running(pid) {
			if time.Now().After(deadline) {
				t.Fatalf("HAProxy process %d still runs after its agent was killed", pid)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	if code, _, err := haproxytest.TryGet(fmt.Sprintf("http://127.0.0.1:%d/", httpPort), ""); err == nil {
		t.Errorf("the bootstrap frontend still answers (%d) after its agent was killed", code)
	}
}

// waitHTTP polls url until it answers status, at most 15 s.
func waitHTTP(t *testing.T, url string, status int) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == status {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not answer %d: %v", url, status, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// running reports whether pid is a process that has not ended (a zombie
// nobody reaped yet has ended).
func running(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(b, ')')
	return i < 0 || i+2 >= len(b) || b[i+2] != 'Z'
}
