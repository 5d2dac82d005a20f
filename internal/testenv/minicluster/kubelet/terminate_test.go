package kubelet

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// termWait bounds a graceful stop in these tests: every one ends within a
// few seconds, a hang fails.
const termWait = 20 * time.Second

// startScript runs script under sh in its own process group, as
// container.start runs a binary (without the pod's network namespace),
// and returns the container and the file the script's TERM trap touches.
// A script that traps TERM records its SIGTERM in that file.
func startScript(t *testing.T, name, script string) (*container, string) {
	t.Helper()
	mark := filepath.Join(t.TempDir(), "term")
	cmd := exec.Command("sh", "-c", script)
	cmd.Env = append(os.Environ(), "MARK="+mark)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &container{name: name, cmd: cmd, done: make(chan struct{}), startedAt: time.Now()}
	go func() {
		err := cmd.Wait()
		c.mu.Lock()
		defer c.mu.Unlock()
		c.exited, c.exitedAt, c.exitCode = true, time.Now(), 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			c.exitCode = ee.ExitCode() // -1: killed by a signal
		}
		close(c.done)
	}()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-c.done
	})
	// The trap must be in place before a test signals.
	time.Sleep(100 * time.Millisecond)
	return c, mark
}

// Scripts: one exits on SIGTERM, one ignores it (the trap records it, the
// loop goes on). Both touch $MARK when SIGTERM arrives.
const (
	exitsOnTerm = `trap 'touch "$MARK"; exit 0' TERM; while :; do sleep 0.05; done`
	ignoresTerm = `trap 'touch "$MARK"' TERM; while :; do sleep 0.05; done`
)

func testKubelet() *Kubelet {
	return &Kubelet{cfg: Config{Log: slog.New(slog.DiscardHandler), Now: time.Now}}
}

func stoppingPod(grace, deletionGrace *int64, preStop *corev1.LifecycleHandler) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "app", Name: "web", DeletionGracePeriodSeconds: deletionGrace},
		Spec: corev1.PodSpec{
			TerminationGracePeriodSeconds: grace,
			Containers:                    []corev1.Container{{Name: "main"}},
		},
	}
	if preStop != nil {
		p.Spec.Containers[0].Lifecycle = &corev1.Lifecycle{PreStop: preStop}
	}
	return p
}

func sleepHook(seconds int64) *corev1.LifecycleHandler {
	return &corev1.LifecycleHandler{Sleep: &corev1.SleepAction{Seconds: seconds}}
}

// terminate runs startTermination on one container and waits for it.
func terminate(ctx context.Context, t *testing.T, pod *corev1.Pod, c *container) time.Time {
	t.Helper()
	var wg sync.WaitGroup
	term := testKubelet().startTermination(ctx, &wg, pod, &runningPod{ns: pod.Namespace, name: pod.Name, containers: []*container{c}})
	select {
	case <-term.done:
	case <-time.After(termWait):
		t.Fatalf("graceful stop still running after %v", termWait)
	}
	wg.Wait()
	return time.Now()
}

// termAt is when the container's SIGTERM arrived (its mark's mtime).
func termAt(t *testing.T, mark string) time.Time {
	t.Helper()
	fi, err := os.Stat(mark)
	if err != nil {
		t.Fatalf("the container never got SIGTERM: %v", err)
	}
	return fi.ModTime()
}

func exitCode(c *container) (int, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.exitCode, c.exited
}

func TestTerminationRunsThePreStopSleepThenSIGTERM(t *testing.T) {
	c, mark := startScript(t, "main", exitsOnTerm)
	start := time.Now()
	terminate(context.Background(), t, stoppingPod(ptr(int64(10)), nil, sleepHook(1)), c)
	if d := termAt(t, mark).Sub(start); d < 900*time.Millisecond {
		t.Errorf("SIGTERM %v after the stop began: want it after the 1 s preStop sleep", d)
	}
	if code, exited := exitCode(c); !exited || code != 0 {
		t.Errorf("container exited %v with code %d: want its own clean exit on SIGTERM, no SIGKILL", exited, code)
	}
}

func TestTerminationKillsAContainerThatIgnoresSIGTERMAtTheDeletionGracePeriod(t *testing.T) {
	c, mark := startScript(t, "main", ignoresTerm)
	// The deletion's grace period (1 s) overrides the spec's 30 s; the
	// SIGKILL still comes no sooner than minTermGrace after the SIGTERM.
	end := terminate(context.Background(), t, stoppingPod(ptr(int64(30)), ptr(int64(1)), nil), c)
	if d := end.Sub(termAt(t, mark)); d < minTermGrace-100*time.Millisecond {
		t.Errorf("SIGKILL %v after SIGTERM: want at least %v", d, minTermGrace)
	}
	if code, exited := exitCode(c); !exited || code != -1 {
		t.Errorf("container exited %v with code %d: want it killed by a signal (-1)", exited, code)
	}
}

func TestTerminationCutsAPreStopHookAtTheGracePeriod(t *testing.T) {
	c, mark := startScript(t, "main", exitsOnTerm)
	start := time.Now()
	// A 30 s hook under a 1 s grace period: SIGTERM at the deadline.
	end := terminate(context.Background(), t, stoppingPod(ptr(int64(1)), nil, sleepHook(30)), c)
	if d := termAt(t, mark).Sub(start); d < 900*time.Millisecond {
		t.Errorf("SIGTERM %v after the stop began: want it at the 1 s grace period", d)
	}
	if d := end.Sub(start); d >= 30*time.Second {
		t.Errorf("the stop took %v: the hook was not cut at the grace period", d)
	}
	if code, _ := exitCode(c); code != 0 {
		t.Errorf("exit code %d: want the container's own exit on SIGTERM", code)
	}
}

func TestTerminationEndsItsHooksWhenTheKubeletStops(t *testing.T) {
	c, mark := startScript(t, "main", exitsOnTerm)
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // the kubelet is stopping
	terminate(ctx, t, stoppingPod(ptr(int64(60)), nil, sleepHook(60)), c)
	termAt(t, mark)
	if code, exited := exitCode(c); !exited || code != 0 {
		t.Errorf("container exited %v with code %d: want SIGTERM right away and its clean exit", exited, code)
	}
}

func TestRunPreStopSkipsExecAndHTTPGetHooksWithAWarning(t *testing.T) {
	deadline := time.Now().Add(time.Minute)
	for name, h := range map[string]*corev1.LifecycleHandler{
		"exec":    {Exec: &corev1.ExecAction{Command: []string{"sleep", "30"}}},
		"httpGet": {HTTPGet: &corev1.HTTPGetAction{Path: "/drain"}},
	} {
		var warned []string
		done := make(chan struct{})
		go func() {
			defer close(done)
			runPreStop(context.Background(), h, deadline, func(msg string) { warned = append(warned, msg) })
		}()
		select {
		case <-done:
		case <-time.After(termWait):
			t.Fatalf("%s hook: runPreStop did not return", name)
		}
		if len(warned) != 1 {
			t.Errorf("%s hook: warnings %q, want one", name, warned)
		}
	}
}

func TestRunPreStopSleepEndsAtAPassedDeadlineAtOnce(t *testing.T) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		runPreStop(context.Background(), sleepHook(60), time.Now().Add(-time.Second), func(string) { t.Error("a sleep hook warned") })
	}()
	select {
	case <-done:
	case <-time.After(termWait):
		t.Fatal("a sleep hook past its deadline still sleeps")
	}
}
