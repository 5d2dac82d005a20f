package rendergate_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/haptic-io/haptic/rendergate"
)

// A check submitted while the checker is paused does not start, and the
// wait does not count against its timeout.
func TestPausedCheckerHoldsNewChecksOutsideTheirTimeout(t *testing.T) {
	c := newChecker(t, rendergate.Config{Binary: fakeBinary(t), Timeout: 300 * time.Millisecond})
	out := textOutput(t, "exit 0")
	c.Pause()
	done := make(chan error, 1)
	go func() { done <- c.Check(context.Background(), out) }()
	select {
	case err := <-done:
		t.Fatalf("the check finished while the checker was paused: %v", err)
	case <-time.After(600 * time.Millisecond): // twice the timeout
	}
	c.Resume()
	if err := waitCheck(t, done); err != nil {
		t.Fatalf("Check after Resume = %v, want a pass", err)
	}
}

// A Pause stops the haproxy process that is running (its state becomes
// T) and the clock of its timeout; Resume continues both. The fake
// haproxy runs until the test releases it, and the timeout is long, so
// that neither ends it before the Pause on a loaded machine. Its sleeps
// run in the background: a foreground command is started with vfork,
// and a shell stopped while it waits for its vfork child shows state D,
// not T.
func TestPauseStopsARunningCheckAndItsTimeout(t *testing.T) {
	dir := worldDir(t)
	must(t, os.Chmod(dir, 0o777))
	pidFile, release := filepath.Join(dir, "pid"), filepath.Join(dir, "release")
	script := fmt.Sprintf("echo $$ > %s; i=0; while [ ! -e %s ] && [ $i -lt 400 ]; do sleep 0.05 & wait $!; i=$((i+1)); done; exit 0", pidFile, release)
	c := newChecker(t, rendergate.Config{Binary: fakeBinary(t), Timeout: 4 * time.Second})
	out := textOutput(t, script)
	done := make(chan error, 1)
	go func() { done <- c.Check(context.Background(), out) }()

	var pid int
	eventuallyTrue(t, "the check to write its pid", func() bool {
		b, err := os.ReadFile(pidFile)
		if err != nil {
			return false
		}
		pid, err = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil
	})
	c.Pause()
	eventuallyTrue(t, fmt.Sprintf("haproxy (pid %d) to be stopped", pid), func() bool { return procState(pid) == "T" })
	select {
	case err := <-done:
		t.Fatalf("the check finished while it was stopped: %v", err)
	case <-time.After(4500 * time.Millisecond): // longer than the timeout
	}
	if s := procState(pid); s != "T" {
		t.Errorf("haproxy's state after 4.5 s paused = %q, want T (stopped)", s)
	}
	must(t, os.WriteFile(release, nil, 0o644))
	c.Resume()
	if err := waitCheck(t, done); err != nil {
		t.Fatalf("Check after Resume = %v, want a pass (the paused time is not part of the timeout)", err)
	}
}

// procState is the state letter of process pid in /proc, "" when gone.
func procState(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ""
	}
	_, rest, ok := strings.Cut(string(b), ") ")
	if !ok || rest == "" {
		return ""
	}
	return rest[:1]
}

func waitCheck(t *testing.T, done <-chan error) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(20 * time.Second):
		t.Fatal("the check did not finish within 20 s of Resume")
		return nil
	}
}

func eventuallyTrue(t *testing.T, what string, f func() bool) {
	t.Helper()
	for range 2000 { // 20 s: a bound against hangs on a loaded machine, not a speed check
		if f() {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("timed out waiting for %s", what)
}
