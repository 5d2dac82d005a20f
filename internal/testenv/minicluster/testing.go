package minicluster

import (
	"context"
	"log/slog"
	"os"
	"testing"
)

// StartT starts a cluster for a test and stops it in t.Cleanup. It skips
// under -short, and skips with the reason when the binaries or the sandbox
// (see [Main]) are missing, unless CI=true, where a missing piece fails the
// test ("run make minicluster").
func StartT(t testing.TB) (*Cluster, Binaries) {
	t.Helper()
	b := RequireT(t)
	c, err := Start(context.Background(), Config{
		Dir:      t.TempDir(),
		Binaries: b,
		Log:      slog.New(slog.NewTextHandler(tWriter{t}, &slog.HandlerOptions{Level: slog.LevelInfo})),
	})
	if err != nil {
		t.Fatalf("start minicluster: %v", err)
	}
	t.Cleanup(c.Stop)
	return c, b
}

// RequireT applies StartT's skip rules without starting anything and
// returns the binaries.
func RequireT(t testing.TB) Binaries {
	t.Helper()
	if testing.Short() {
		t.Skip("minicluster: starts a real Kubernetes control plane; skipped under -short")
	}
	b, err := FindBinaries()
	if err != nil {
		missing(t, err.Error())
	}
	if ok, reason := InSandbox(); !ok {
		missing(t, "minicluster: no private network namespace: "+reason)
	}
	return b
}

func missing(t testing.TB, msg string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s (CI=true: run make minicluster, as root)", msg)
	}
	t.Skip(msg)
}

// tWriter sends log lines to t.Log.
type tWriter struct{ t testing.TB }

func (w tWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(string(p[:len(p)-min(len(p), 1)]))
	return len(p), nil
}
