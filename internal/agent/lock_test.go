package agent_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/haptic-io/haptic/internal/agent"
)

// TestASecondAgentOnTheSameTreeIsRefusedUntilTheFirstCloses: two agents
// on one tree would interleave journals and swaps; the second is refused
// with an error naming the process that holds the tree.
func TestASecondAgentOnTheSameTreeIsRefusedUntilTheFirstCloses(t *testing.T) {
	dir := t.TempDir()
	cfg := agent.Config{BaseDir: dir, MasterSocket: filepath.Join(dir, "master.sock"), StatsSocket: filepath.Join(dir, "stats.sock"), DriftInterval: -1}
	first, err := agent.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	_, err = agent.New(cfg)
	var le *agent.LockError
	if !errors.As(err, &le) || le.PID != os.Getpid() {
		t.Fatalf("second agent: %v, want a *LockError naming process %d", err, os.Getpid())
	}
	if want := fmt.Sprintf("%s is locked by process %d", filepath.Join(dir, ".haptic.lock"), os.Getpid()); !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not say %q", err, want)
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	second, err := agent.New(cfg)
	if err != nil {
		t.Fatalf("after the first closed: %v", err)
	}
	_ = second.Close()
}
