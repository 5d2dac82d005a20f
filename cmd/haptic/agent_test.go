package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/haptic-io/haptic/internal/haproxytest"
)

// agentApp is an app with only the agent command, run in process.
func agentApp(stdout, stderr io.Writer) *cli.App {
	return &cli.App{Name: "haptic", Commands: []*cli.Command{agentCommand()}, Writer: stdout, ErrWriter: stderr,
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
	var out, errOut lockedBuffer
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
