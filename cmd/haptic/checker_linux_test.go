package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/haptic-io/haptic/internal/haproxytest"
	"github.com/haptic-io/haptic/internal/testenv/syncbuf"
	"github.com/haptic-io/haptic/rendergate"
	"github.com/haptic-io/haptic/renderplan"
)

// hideEnv names a directory the child `haptic checker` of
// TestCheckerCannotReadTheControllersToken covers with an empty tmpfs in
// its own mount namespace before it starts: the controller container's
// token mount, which the checker container of the chart does not have.
const hideEnv = "HAPTIC_TEST_HIDE_DIR"

func init() {
	dir := os.Getenv(hideEnv)
	if dir == "" {
		return
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", syscall.MS_NOSUID|syscall.MS_NODEV|syscall.MS_NOEXEC, "size=64k"); err != nil {
		fmt.Fprintf(os.Stderr, "haptic test: hide %s: %v\n", dir, err)
		os.Exit(3)
	}
}

const tokenMarker = "eyJTOKEN-c0ntr0ller-5a1d"

// TestCheckerCannotReadTheControllersToken feeds real HAProxy
// configurations that point every file-reading directive at the
// controller's service-account token and checks that none of the content
// comes back through `haptic checker`, which runs where the token is not
// mounted; the counterfactual runs the same checks in the controller's
// own process, where map_ip and lua-load quote the token in their errors.
func TestCheckerCannotReadTheControllersToken(t *testing.T) {
	if testing.Short() {
		t.Skip("runs haproxy -c; skipped with -short")
	}
	if os.Geteuid() != 0 {
		t.Skip("the mount namespace that stands for the checker container needs root")
	}
	bin := haproxytest.Binary(t, "3.4")
	base, err := os.MkdirTemp("", "haptic-checker-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(base) })
	// The checks run as nobody (the checker is root here): let it reach
	// its scratch directory.
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	tokenDir := filepath.Join(base, "serviceaccount")
	scratch := filepath.Join(base, "scratch")
	for _, d := range []string{tokenDir, scratch} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	token := filepath.Join(tokenDir, "token")
	// 0644 and "root" owned, as the kubelet mounts it by default: the
	// isolation must not depend on file modes.
	if err := os.WriteFile(token, []byte(tokenMarker+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	sock := filepath.Join(base, "check.sock")
	cmd := exec.Command(os.Args[0], "checker", "--socket", sock, "--haproxy", bin, "--scratch-dir", scratch, "--log-level", "debug")
	cmd.Env = append(os.Environ(), hideEnv+"="+tokenDir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Unshareflags: syscall.CLONE_NEWNS}
	var logs syncbuf.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		<-exited
		t.Logf("checker logs:\n%s", logs.String())
	})
	remote := rendergate.NewRemoteChecker(sock, "gate")
	local, err := rendergate.NewHAProxyChecker(rendergate.Config{Binary: bin, ScratchDir: scratch, RunAs: &rendergate.User{UID: 0, GID: 0}})
	if err != nil {
		t.Fatal(err)
	}
	waitForSocket(t, sock, exited)

	attacks := []struct{ name, lines string }{
		{"map_ip", fmt.Sprintf("    http-request set-var(txn.x) src,map_ip(%s)\n", token)},
		{"lua-load", fmt.Sprintf("global_lua %s\n", token)},
		{"bind crt", fmt.Sprintf("    bind 127.0.0.1:18491 ssl crt %s\n", token)},
		{"server ca-file", fmt.Sprintf("    use_backend be_leak\nbackend be_leak\n    server s1 127.0.0.1:1 ssl verify required ca-file %s\n", token)},
		{"errorfile", fmt.Sprintf("    errorfile 503 %s\n", token)},
	}
	leakedLocally := map[string]bool{}
	for _, a := range attacks {
		t.Run(a.name, func(t *testing.T) {
			out := attackOutput(t, a.lines)
			err := remote.Check(context.Background(), out)
			var ce *rendergate.CheckError
			if !errors.As(err, &ce) {
				t.Fatalf("remote Check = %v, want a refusal (the file does not exist in the checker)", err)
			}
			if text := ce.Error() + ce.Output + strings.Join(ce.Alerts, "\n"); strings.Contains(text, tokenMarker) || strings.Contains(text, "c0ntr0ller") {
				t.Fatalf("the refusal quotes the token:\n%s", text)
			}
			t.Logf("refused without the token: %s", ce.Reason)
			if lerr := local.Check(context.Background(), out); lerr != nil && strings.Contains(lerr.Error()+outputOf(lerr), tokenMarker) {
				leakedLocally[a.name] = true
			}
		})
	}
	// Counterfactual: in the controller's own process the same
	// configurations read the token, so the checks above can fail.
	if !leakedLocally["map_ip"] {
		t.Errorf("map_ip does not quote the token even in-process (leaked: %v): the test proves nothing", leakedLocally)
	}
}

// attackOutput is a small valid tree with lines in a frontend (or, for
// lines starting "global_", in global).
func attackOutput(t *testing.T, lines string) *renderplan.Output {
	t.Helper()
	global := ""
	if rest, ok := strings.CutPrefix(lines, "global_lua "); ok {
		global, lines = "    lua-load "+rest, ""
	}
	b := renderplan.NewBuilder()
	b.Text("global\n    maxconn 100\n" + global + "\ndefaults base\n    mode http\n    timeout connect 1s\n    timeout client 1s\n    timeout server 1s\n\n" +
		"frontend fe from base\n    bind 127.0.0.1:18490\n" + lines + "\n")
	out, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func outputOf(err error) string {
	var ce *rendergate.CheckError
	if errors.As(err, &ce) {
		return ce.Output
	}
	return ""
}

func waitForSocket(t *testing.T, sock string, exited <-chan struct{}) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		if _, err := os.Stat(sock); err == nil {
			return
		}
		select {
		case <-exited:
			t.Fatalf("haptic checker exited before it listened on %s", sock)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("haptic checker did not listen on %s", sock)
		}
	}
}
