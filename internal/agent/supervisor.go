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
// own process group. Local mode and tests use it; in Kubernetes HAProxy
// runs in its own container and the agent only connects. A Supervisor is
// safe for concurrent use.
type Supervisor struct {
	cfg  SupervisorConfig
	cmd  *exec.Cmd
	done chan struct{}
	err  error // the master's exit; read after done is closed
}

// StartSupervisor starts HAProxy and waits until its master socket lists
// a worker. When BaseDir has no haproxy.cfg yet it fails: write one first
// (see [BootstrapConfig]).
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
	args := append([]string{"-W", "-S", cfg.MasterSocket + ",mode,600", "-f", renderplan.ConfigPath}, cfg.Args...)
	cmd := exec.Command(cfg.Binary, args...)
	cmd.Dir = cfg.BaseDir
	cmd.Stdout, cmd.Stderr = cfg.Output, cfg.Output
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("supervisor: start %s: %w", cfg.Binary, err)
	}
	s := &Supervisor{cfg: cfg, cmd: cmd, done: make(chan struct{})}
	go func() {
		s.err = cmd.Wait()
		close(s.done)
	}()
	cfg.Log.Info("haproxy started", "pid", cmd.Process.Pid)
	if err := s.waitReady(ctx); err != nil {
		_ = s.Stop(context.Background())
		return nil, err
	}
	return s, nil
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
