package local_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/haptic-io/haptic/internal/haproxytest"
	"github.com/haptic-io/haptic/internal/testenv/syncbuf"
)

// repoRoot walks up to the directory holding the Makefile.
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "Makefile")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no Makefile above the test's directory")
		}
		dir = parent
	}
}

// TestMakeDemoServesTheQuickstartAndStopsCleanly runs `make demo` as a
// person would (on other ports for the frontends; the quickstart's
// EndpointSlices name the echo servers 127.0.0.1:9001 and :9002), curls
// the quickstart routes and adds one by dropping the example file, then
// interrupts it like Ctrl-C and checks that nothing keeps serving.
func TestMakeDemoServesTheQuickstartAndStopsCleanly(t *testing.T) {
	haproxytest.Binary(t, "3.4") // skips under -short; the demo installs it anyway
	root := repoRoot(t)
	// HAPTIC_DEMO_MAKEFILE runs another makefile's demo target (to try a
	// change of the target before it lands).
	makefile := os.Getenv("HAPTIC_DEMO_MAKEFILE")
	if makefile == "" {
		makefile = filepath.Join(root, "Makefile")
	}
	if out, err := exec.Command("make", "-C", root, "-f", makefile, "-n", "demo").CombinedOutput(); err != nil || !bytes.Contains(out, []byte("haptic local")) {
		t.Skipf("the Makefile's demo target does not run `haptic local` yet (make -n demo: %v)", err)
	}
	for _, addr := range []string{"127.0.0.1:9001", "127.0.0.1:9002"} {
		if l, err := net.Listen("tcp", addr); err != nil {
			t.Skipf("the quickstart's echo address %s is taken: %v", addr, err)
		} else {
			_ = l.Close()
		}
	}
	listen := fmt.Sprintf("127.0.0.1:%d", haproxytest.FreePort(t))
	demoDir := filepath.Join(root, ".cache", "demo", "resources")

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "make", "-C", root, "-f", makefile, "demo",
		"DEMO_LISTEN="+listen,
		fmt.Sprintf("DEMO_STATS=127.0.0.1:%d", haproxytest.FreePort(t)),
		fmt.Sprintf("DEMO_METRICS=127.0.0.1:%d", haproxytest.FreePort(t)))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var out syncbuf.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pgid := cmd.Process.Pid
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stopped := false
	defer func() {
		if !stopped {
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
			<-exited
		}
		t.Logf("make demo output:\n%s", out.String())
	}()

	get := func(host string) (int, string) {
		code, body, err := haproxytest.TryGet("http://"+listen+"/", host)
		if err != nil {
			return 0, err.Error()
		}
		return code, body
	}
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Minute) // the first run builds and may install HAProxy
		for !cond() {
			select {
			case err := <-exited:
				stopped = true
				t.Fatalf("make demo exited (%v) while waiting for %s", err, what)
			default:
			}
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s", what)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}

	waitFor("echo.localhost to answer 200", func() bool { code, _ := get("echo.localhost"); return code == 200 })
	for _, want := range []string{"curl -H 'Host: echo.localhost' http://" + listen + "/", "new-route.yaml"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the banner does not show %q", want)
		}
	}
	seen := map[string]bool{}
	for range 20 {
		_, body := get("echo.localhost")
		if f := strings.Fields(body); len(f) > 1 {
			seen[f[1]] = true
		}
	}
	if !seen["127.0.0.1:9001"] || !seen["127.0.0.1:9002"] {
		t.Errorf("echo.localhost reached %v, want both echo servers", seen)
	}
	if code, _ := get("new.localhost"); code != 404 {
		t.Errorf("new.localhost before its file: %d, want 404", code)
	}
	b, err := os.ReadFile(filepath.Join(root, "examples", "quickstart", "extra", "new-route.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	writeAtomic(t, filepath.Join(demoDir, "new-route.yaml"), string(b))
	waitFor("new.localhost to answer 200 after the file drop", func() bool { code, _ := get("new.localhost"); return code == 200 })

	// Ctrl-C: SIGINT to the foreground process group.
	if err := syscall.Kill(-pgid, syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
		stopped = true
	case <-time.After(30 * time.Second):
		t.Fatal("make demo did not stop within 30s of SIGINT")
	}
	if c, err := net.DialTimeout("tcp", listen, time.Second); err == nil {
		_ = c.Close()
		t.Errorf("%s still accepts connections after the demo stopped: HAProxy was left running", listen)
	}
	if !strings.Contains(out.String(), "haproxy stopped") {
		t.Error("the demo's log does not say HAProxy stopped")
	}
	sc := bufio.NewScanner(strings.NewReader(out.String()))
	for sc.Scan() {
		if strings.Contains(sc.Text(), "level=ERROR") && !strings.Contains(sc.Text(), "context canceled") {
			t.Errorf("error in the demo's log: %s", sc.Text())
		}
	}
}
