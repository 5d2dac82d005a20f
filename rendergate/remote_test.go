package rendergate_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/haptic-io/haptic/internal/haproxytest"
	"github.com/haptic-io/haptic/rendergate"
)

// serveChecks serves a CheckServer of HAProxy 3.4 on a Unix socket and
// returns the socket's path.
func serveChecks(t *testing.T) string {
	t.Helper()
	return serveChecksOf(t, haproxytest.Binary(t, "3.4"))
}

// serveChecksOf serves checks that run binary.
func serveChecksOf(t *testing.T, binary string) string {
	t.Helper()
	// Checks run as nobody under root: the scratch directory must let
	// nobody in.
	scratch, err := os.MkdirTemp("", "haptic-remote-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(scratch) })
	must(t, os.Chmod(scratch, 0o755))
	srv, err := rendergate.NewCheckServer(rendergate.Config{Binary: binary, ScratchDir: scratch, Log: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(t.TempDir(), "check.sock")
	l, err := rendergate.ListenUnix(sock)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, l) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return sock
}

func TestRemoteCheckerPassesAndRefusesWithTheAlertAndThePlanID(t *testing.T) {
	c := rendergate.NewRemoteChecker(serveChecks(t), "gate")
	if err := c.Check(context.Background(), validOutput(t)); err != nil {
		t.Fatalf("valid output: %v", err)
	}
	bad := withConfig(t, validOutput(t), "balance roundrobin", "balance no-such-algorithm")
	ce := mustRefuse(t, c.Check(context.Background(), bad))
	if ce.PlanID != bad.ID() {
		t.Errorf("PlanID = %q, want the client's %q", ce.PlanID, bad.ID())
	}
	if len(ce.Alerts) == 0 || !strings.Contains(ce.Error(), "balance only supports") || ce.ExitCode != 1 {
		t.Errorf("refusal = %+v, want exit 1 with the ALERT on balance", ce)
	}
	if v := rendergate.VerdictOf(ce); v != rendergate.VerdictRefused {
		t.Errorf("VerdictOf = %v, want refused", v)
	}
}

func TestRemoteCheckerWithoutServerIsNoVerdict(t *testing.T) {
	c := rendergate.NewRemoteChecker(filepath.Join(t.TempDir(), "none.sock"), "gate")
	// A missing socket is waited for (the checker may start later) until
	// ctx ends.
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	err := c.Check(ctx, validOutput(t))
	var ce *rendergate.CheckError
	if err == nil || errors.As(err, &ce) || rendergate.VerdictOf(err) != rendergate.VerdictUnknown {
		t.Fatalf("Check = %v, want an error that is no refusal", err)
	}
}

func TestRemoteCheckerPauseHoldsItsLaneOnly(t *testing.T) {
	sock := serveChecks(t)
	gate, webhook := rendergate.NewRemoteChecker(sock, "gate"), rendergate.NewRemoteChecker(sock, "webhook")
	gate.Pause()
	// The hold travels in the background: wait until a gate check is held.
	held := make(chan error, 1)
	deadline := time.Now().Add(10 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		err := gate.Check(ctx, validOutput(t))
		cancel()
		if err != nil && errors.Is(err, context.DeadlineExceeded) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a gate check was never held by Pause (last: %v)", err)
		}
	}
	if err := webhook.Check(context.Background(), validOutput(t)); err != nil {
		t.Fatalf("the webhook lane is held by the gate's Pause: %v", err)
	}
	go func() { held <- gate.Check(context.Background(), validOutput(t)) }()
	gate.Resume()
	select {
	case err := <-held:
		if err != nil {
			t.Fatalf("check after Resume: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the gate check is still held after Resume")
	}
}
