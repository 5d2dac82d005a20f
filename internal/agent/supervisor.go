package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/haptic-io/haptic/haproxysock"
	"github.com/haptic-io/haptic/renderplan"
)

// SupervisorConfig configures a [Supervisor].
type SupervisorConfig struct {
	// Binary is the haproxy executable. Required.
	Binary string
	// BaseDir is HAProxy's working directory; haproxy.cfg is read from
	// it. Required.
	BaseDir string
	// MasterSocket is the master CLI socket passed to -S. Required.
	MasterSocket string
	// StatsSocket, when set, is the worker stats socket the configuration
	// declares: start also waits until it answers.
	StatsSocket string
	// Args are extra command-line arguments.
	Args []string
	// Output receives HAProxy's stdout and stderr; nil discards them.
	Output io.Writer
	// StartTimeout bounds the wait for the master socket to show a
	// worker. Zero means 10 s.
	StartTimeout time.Duration
	// Log receives the supervisor's logs; nil discards them.
	Log *slog.Logger
}

// Supervisor runs one HAProxy in master-worker mode ("haproxy -W -S
// <master socket> -f haproxy.cfg", cwd BaseDir) as a child process in its
// own process group (so that a Ctrl-C at the terminal reaches the
// supervisor, which stops HAProxy in order). Local mode and tests use it;
// in Kubernetes HAProxy runs in its own container and the agent only
// connects. A Supervisor is safe for concurrent use.
//
// # When the supervisor dies
//
// HAProxy does not outlive its supervisor. On Linux the master is
// started with a parent-death signal (PR_SET_PDEATHSIG, SIGTERM): when the
// supervising process ends, kill -9 included, the kernel stops the
// master, and the master its workers. The kernel sends that signal when
// the thread that forked the master ends, not only the process, so the
// master is started and waited for on a goroutine locked to its thread
// for the master's whole life. Elsewhere, and as a second line on Linux,
// [StartSupervisor] first stops a master that still answers on the
// master socket: one a dead supervisor left behind. Callers hold the
// tree's lock (see [New]) so that no live supervisor shares the socket.
type Supervisor struct {
	cfg  SupervisorConfig
	cmd  *exec.Cmd
	done chan struct{}
	err  error // the master's exit; read after done is closed
}

// StartSupervisor stops a master left on MasterSocket (see "When the
// supervisor dies" above), starts HAProxy and waits until its master
// socket lists a worker. When BaseDir has no haproxy.cfg yet it fails:
// write one first (see [BootstrapConfig]).
func StartSupervisor(ctx context.Context, cfg SupervisorConfig) (*Supervisor, error) {
	switch {
	case cfg.Binary == "":
		return nil, errors.New("supervisor: Binary is required")
	case cfg.BaseDir == "":
		return nil, errors.New("supervisor: BaseDir is required")
	case cfg.MasterSocket == "":
		return nil, errors.New("supervisor: MasterSocket is required")
	}
	if cfg.StartTimeout <= 0 {
		cfg.StartTimeout = 10 * time.Second
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Output == nil {
		cfg.Output = io.Discard
	}
	cfgPath := filepath.Join(cfg.BaseDir, renderplan.ConfigPath)
	if _, err := os.Stat(cfgPath); err != nil {
		return nil, fmt.Errorf("supervisor: %w", err)
	}
	if err := stopLeftover(ctx, cfg); err != nil {
		return nil, err
	}
	args := append([]string{"-W", "-S", cfg.MasterSocket + ",mode,600", "-f", renderplan.ConfigPath}, cfg.Args...)
	cmd := exec.Command(cfg.Binary, args...)
	cmd.Dir = cfg.BaseDir
	cmd.Stdout, cmd.Stderr = cfg.Output, cfg.Output
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	setParentDeathSignal(cmd.SysProcAttr)
	s := &Supervisor{cfg: cfg, cmd: cmd, done: make(chan struct{})}
	if err := s.start(); err != nil {
		return nil, fmt.Errorf("supervisor: start %s: %w", cfg.Binary, err)
	}
	cfg.Log.Info("haproxy started", "pid", cmd.Process.Pid)
	if err := s.waitReady(ctx); err != nil {
		_ = s.Stop(context.Background())
		return nil, err
	}
	return s, nil
}

// start starts the master and waits for it in the background, both on
// one goroutine locked to its OS thread: the parent-death signal fires
// when the thread that forked the master ends, and the Go runtime ends a
// thread whose locked goroutine returns. This thread outlives the master.
func (s *Supervisor) start() error {
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := s.cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		s.err = s.cmd.Wait()
		close(s.done)
	}()
	return <-started
}

// stopLeftover stops the master that answers on cfg.MasterSocket, if
// any: HAProxy started by a supervisor that died without stopping it.
// Starting a second master beside it would bind the same ports
// (SO_REUSEPORT) and split the traffic between the two.
func stopLeftover(ctx context.Context, cfg SupervisorConfig) error {
	m := &haproxysock.Master{Path: cfg.MasterSocket, Timeout: time.Second}
	procs, err := m.ShowProc(ctx)
	if err != nil || procs.Master.PID <= 0 {
		return nil // nothing answers: no master left
	}
	pid := procs.Master.PID
	cfg.Log.Warn("a haproxy master from an earlier run still serves on the master socket; stopping it", "pid", pid, "socket", cfg.MasterSocket)
	_ = syscall.Kill(pid, syscall.SIGTERM)
	if waitGone(ctx, pid, 10*time.Second) {
		return nil
	}
	// The master leads its process group (Setpgid): its workers go too.
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	_ = syscall.Kill(pid, syscall.SIGKILL)
	if waitGone(ctx, pid, 5*time.Second) {
		return nil
	}
	return fmt.Errorf("supervisor: the haproxy master %d left on %s does not stop", pid, cfg.MasterSocket)
}

// waitGone polls until pid has ended, for at most d or until ctx ends.
func waitGone(ctx context.Context, pid int, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for processExists(pid) {
		if time.Now().After(deadline) {
			return false
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(20 * time.Millisecond):
		}
	}
	return true
}

func (s *Supervisor) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.StartTimeout)
	defer cancel()
	m := &haproxysock.Master{Path: s.cfg.MasterSocket, Timeout: time.Second}
	var last error
	for {
		select {
		case <-s.done:
			return fmt.Errorf("supervisor: haproxy exited during start: %w", s.err)
		case <-ctx.Done():
			return fmt.Errorf("supervisor: haproxy not ready: %w (last: %w)", ctx.Err(), last)
		case <-time.After(20 * time.Millisecond):
		}
		procs, err := m.ShowProc(ctx)
		if err == nil {
			if _, ok := procs.Serving(); !ok {
				err = errors.New("no worker yet")
			}
		}
		if err == nil && s.cfg.StatsSocket != "" {
			_, err = (&haproxysock.Client{Path: s.cfg.StatsSocket, Timeout: time.Second}).Info(ctx)
		}
		if err == nil {
			return nil
		}
		last = err
	}
}

// PID returns the master's process ID.
func (s *Supervisor) PID() int { return s.cmd.Process.Pid }

// Done is closed when the master has exited.
func (s *Supervisor) Done() <-chan struct{} { return s.done }

// Wait waits for the master to exit and returns its exit error.
func (s *Supervisor) Wait() error {
	<-s.done
	return s.err
}

// Stop sends SIGTERM to the master (by PID) and waits for it; when ctx
// ends first, or after 10 s, it kills the process group. Workers left in
// the group are killed too.
func (s *Supervisor) Stop(ctx context.Context) error {
	pgid := s.cmd.Process.Pid
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-ctx.Done():
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-s.done
	case <-time.After(10 * time.Second):
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-s.done
	}
	if syscall.Kill(-pgid, 0) == nil {
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
	}
	return nil
}

// BootstrapConfig returns a minimal haproxy.cfg to start HAProxy on before
// the first plan lands: the worker stats socket (level admin, exposing the
// listeners for seamless reloads) and a frontend per bind address that
// answers 503 to everything. A relative stats socket path (relative to
// HAProxy's working directory) is written unix@<path>, as HAProxy reads a
// bare name as a host. See [WriteBootstrap] for writing it safely.
func BootstrapConfig(statsSocket string, binds []string) []byte {
	if !strings.HasPrefix(statsSocket, "/") && !strings.Contains(statsSocket, "@") {
		statsSocket = "unix@" + statsSocket
	}
	var b strings.Builder
	fmt.Fprintf(&b, "global\n    stats socket %s mode 600 level admin expose-fd listeners\n    stats timeout 1h\n\n", statsSocket)
	b.WriteString("defaults\n    mode http\n    timeout connect 5s\n    timeout client 30s\n    timeout server 30s\n\n")
	if len(binds) > 0 {
		b.WriteString("frontend fe_bootstrap\n")
		for _, bind := range binds {
			fmt.Fprintf(&b, "    bind %s\n", bind)
		}
		b.WriteString("    http-request return status 503 content-type text/plain string \"no configuration yet\\n\"\n")
	}
	return []byte(b.String())
}
