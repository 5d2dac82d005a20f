package agent_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/haptic-io/haptic/internal/agent"
	"github.com/haptic-io/haptic/internal/haproxytest"
)

// TestStartingASupervisorStopsAMasterLeftOnItsSocket: a master that still
// answers on the master socket was left by a supervisor that died; the
// next start stops it rather than run a second master on the same ports.
func TestStartingASupervisorStopsAMasterLeftOnItsSocket(t *testing.T) {
	bin := haproxytest.Binary(t, "3.4")
	dir, err := os.MkdirTemp("", "hxs-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	port := haproxytest.FreePort(t)
	stats := filepath.Join(dir, "stats.sock")
	if err := os.WriteFile(filepath.Join(dir, "haproxy.cfg"), agent.BootstrapConfig(stats, []string{fmt.Sprintf("127.0.0.1:%d", port)}), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := agent.SupervisorConfig{Binary: bin, BaseDir: dir, MasterSocket: filepath.Join(dir, "master.sock"), StatsSocket: stats, Log: testLogger(t)}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	left, err := agent.StartSupervisor(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = left.Stop(context.Background()) })

	next, err := agent.StartSupervisor(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = next.Stop(context.Background()) })
	select {
	case <-left.Done():
	case <-time.After(5 * time.Second):
		t.Errorf("the master left on the socket (pid %d) still runs beside the new one (pid %d)", left.PID(), next.PID())
	}
	if code, _ := haproxytest.Get(t, fmt.Sprintf("http://127.0.0.1:%d/", port), ""); code != 503 {
		t.Errorf("bootstrap frontend answered %d, want 503", code)
	}
}
