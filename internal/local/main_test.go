package local_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/haptic-io/haptic/internal/local"
	"github.com/haptic-io/haptic/internal/testenv/syncbuf"
)

// childEnv makes the test binary run local mode on the site it holds (a
// JSON childSite) instead of the tests: the supervisor a test kills.
const childEnv = "HAPTIC_LOCAL_TEST_CHILD"

func TestMain(m *testing.M) {
	if spec := os.Getenv(childEnv); spec != "" {
		os.Exit(runChild(spec))
	}
	os.Exit(m.Run())
}

// childSite is what a child runs local mode on.
type childSite struct {
	HAProxy, Resources, ConfigPath, WorkDir string
	Port, Stats                             int
}

// childInfo is the line a child prints once local mode serves.
type childInfo struct {
	PID, Master, Worker int
}

// runChild runs local mode until it is signalled, printing a childInfo
// line on stdout once it serves.
func runChild(spec string) int {
	var cs childSite
	if err := json.Unmarshal([]byte(spec), &cs); err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	s := &site{bin: cs.HAProxy, resources: cs.Resources, cfgPath: cs.ConfigPath, work: cs.WorkDir, port: cs.Port, stats: cs.Stats}
	cfg := s.config(prometheus.NewRegistry())
	cfg.Log = slog.New(slog.NewTextHandler(os.Stderr, nil))
	cfg.HAProxyOutput = os.Stderr
	cfg.Ready = func(info local.Info) {
		go func() {
			worker := 0
			if st, err := info.Agent.State(ctx); err == nil {
				worker = st.Worker.PID
			}
			b, _ := json.Marshal(childInfo{PID: os.Getpid(), Master: info.HAProxyPID, Worker: worker})
			fmt.Printf("%s\n", b)
		}()
	}
	if err := local.Run(ctx, cfg); err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 1
	}
	return 0
}

// child is local mode running in a child process.
type child struct {
	cmd    *exec.Cmd
	info   childInfo
	stderr *syncbuf.Buffer
}

// startChild runs local mode on s in a child process and waits until it
// serves; the child is killed when the test ends.
func (s *site) startChild() *child {
	t := s.t
	t.Helper()
	spec, err := json.Marshal(childSite{HAProxy: s.bin, Resources: s.resources, ConfigPath: s.cfgPath, WorkDir: s.work, Port: s.port, Stats: s.stats})
	if err != nil {
		t.Fatal(err)
	}
	c := &child{cmd: exec.Command(os.Args[0], "-test.run=^$"), stderr: &syncbuf.Buffer{}}
	c.cmd.Env = append(os.Environ(), childEnv+"="+string(spec))
	c.cmd.Stderr = c.stderr
	// HAProxy inherits the child's stderr: a HAProxy that outlives the
	// child must not keep Wait waiting for the pipe to close.
	c.cmd.WaitDelay = time.Second
	out, err := c.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = c.cmd.Process.Kill()
		_ = c.cmd.Wait()
		if t.Failed() {
			t.Logf("child's output:\n%s", c.stderr.String())
		}
	})
	line := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "{") {
				line <- sc.Text()
				return
			}
		}
		close(line)
	}()
	select {
	case l, ok := <-line:
		if !ok {
			t.Fatalf("the child ended before it served:\n%s", c.stderr.String())
		}
		if err := json.Unmarshal([]byte(l), &c.info); err != nil {
			t.Fatal(err)
		}
	case <-time.After(waitTimeout):
		t.Fatalf("the child did not serve:\n%s", c.stderr.String())
	}
	return c
}

// kill SIGKILLs the child and waits for it.
func (c *child) kill(t *testing.T) {
	t.Helper()
	if err := c.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = c.cmd.Wait()
}
