package rendergate

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
	"sync/atomic"
	"time"

	"github.com/haptic-io/haptic/renderplan"
)

// Defaults of [Config].
const (
	DefaultTimeout   = 10 * time.Second
	DefaultMaxOutput = 64 << 10
	// NobodyID is the uid and gid a check runs as when the controller runs
	// as root and [Config.RunAs] is nil (nobody/nogroup on Debian).
	NobodyID = 65534
)

// Config configures a [HAProxyChecker]. The zero value of each optional
// field means its default.
type Config struct {
	// Binary is the haproxy executable: a path, or a name looked up in
	// PATH when the checker is made. Required.
	Binary string
	// Timeout bounds one check, from laying out the tree to haproxy's exit,
	// not counting the time it is held by [HAProxyChecker.Pause].
	// A check that runs longer is killed (with its process group) and is a
	// refusal with [CheckError.TimedOut] set. Zero means [DefaultTimeout].
	Timeout time.Duration
	// ScratchDir is the directory under which each check lays out its tree,
	// in a fresh subdirectory that is removed afterwards. Empty means
	// os.TempDir().
	ScratchDir string
	// MaxOutput caps the bytes of haproxy's output kept per check; the rest
	// is counted and dropped. Zero means [DefaultMaxOutput].
	MaxOutput int
	// RunAs is the user haproxy runs as. Nil means uid and gid [NobodyID]
	// when the controller runs as root (or root itself, with a warning,
	// when nobody may not execute Binary), and the controller's own user
	// otherwise. Setting another user needs root.
	RunAs *User
	// Interactive runs haproxy at the caller's CPU priority rather than
	// nice 19: for checks someone waits on, such as an admission review,
	// which at nice 19 wait for every other runnable process.
	Interactive bool
	// Log receives a warning when network isolation is not available and a
	// debug record per check. Nil discards.
	Log *slog.Logger
}

// User is a numeric uid and gid.
type User struct {
	UID, GID uint32
}

// HAProxyChecker is the [renderplan.Checker] that runs `haproxy -c -dr` on
// a rendered tree. Each check lays the output's files out under a fresh
// scratch directory exactly as the agent lays out its tree, runs haproxy there
// (working directory = the tree, so relative map, certificate and Lua paths
// resolve as they will in the pod) and removes the directory. See the
// package documentation for the isolation it applies and its limits.
//
// A HAProxyChecker is safe for concurrent use; each check uses its own
// scratch directory and process.
type HAProxyChecker struct {
	binary      string
	version     string
	timeout     time.Duration
	scratch     string
	maxOutput   int
	runAs       *User
	isolated    bool // network namespace available, decided once by the probe in New
	interactive bool
	log         *slog.Logger
	pauser      // Pause and Resume
}

var (
	_ renderplan.Checker = (*HAProxyChecker)(nil)
	_ Pauser             = (*HAProxyChecker)(nil)
)

// NewHAProxyChecker applies cfg's defaults, checks it, and runs `haproxy -v`
// once (bounded by cfg.Timeout) to learn the version and whether the
// network namespace can be created. When it cannot, the checker runs
// without network isolation and logs a warning saying so.
func NewHAProxyChecker(cfg Config) (*HAProxyChecker, error) {
	if cfg.Binary == "" {
		return nil, errors.New("rendergate: Config.Binary is empty")
	}
	bin, err := exec.LookPath(cfg.Binary)
	if err != nil {
		return nil, fmt.Errorf("rendergate: Config.Binary: %w", err)
	}
	if cfg.Timeout < 0 {
		return nil, fmt.Errorf("rendergate: Config.Timeout is negative (%v)", cfg.Timeout)
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.MaxOutput < 0 {
		return nil, fmt.Errorf("rendergate: Config.MaxOutput is negative (%d)", cfg.MaxOutput)
	}
	if cfg.MaxOutput == 0 {
		cfg.MaxOutput = DefaultMaxOutput
	}
	if cfg.ScratchDir == "" {
		cfg.ScratchDir = os.TempDir()
	}
	if fi, err := os.Stat(cfg.ScratchDir); err != nil {
		return nil, fmt.Errorf("rendergate: Config.ScratchDir: %w", err)
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("rendergate: Config.ScratchDir %s is not a directory", cfg.ScratchDir)
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	euid := os.Geteuid()
	defaultUser := cfg.RunAs == nil && euid == 0
	switch {
	case defaultUser && !othersMayExecute(bin):
		// nobody cannot reach the binary (it lives under a root-only
		// directory such as /root): checks run as root, still without
		// environment or network, rather than not at all.
		cfg.Log.Warn("rendergate: haproxy is not executable by nobody; checks run as root", "binary", bin)
	case defaultUser:
		cfg.RunAs = &User{UID: NobodyID, GID: NobodyID}
	case cfg.RunAs != nil && euid != 0 && (int(cfg.RunAs.UID) != euid || int(cfg.RunAs.GID) != os.Getegid()):
		return nil, fmt.Errorf("rendergate: Config.RunAs %d:%d needs root (running as uid %d)", cfg.RunAs.UID, cfg.RunAs.GID, euid)
	}
	c := &HAProxyChecker{
		binary:      bin,
		timeout:     cfg.Timeout,
		scratch:     cfg.ScratchDir,
		maxOutput:   cfg.MaxOutput,
		runAs:       cfg.RunAs,
		log:         cfg.Log,
		interactive: cfg.Interactive,
	}
	if err := c.probe(); err != nil {
		return nil, err
	}
	return c, nil
}

// probe runs `haproxy -v` with network isolation, and without it if the
// namespace cannot be made, and records the version line.
func (c *HAProxyChecker) probe() error {
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	// Run it where checks run, as the user they run as, so that a scratch
	// directory the user cannot enter fails here and not at every check.
	dir, err := os.MkdirTemp(c.scratch, "rendergate-probe-")
	if err != nil {
		return fmt.Errorf("rendergate: Config.ScratchDir: %w", err)
	}
	defer os.RemoveAll(dir)
	if c.runAs != nil {
		if err := os.Chown(dir, int(c.runAs.UID), int(c.runAs.GID)); err != nil {
			return fmt.Errorf("rendergate: Config.ScratchDir: %w", err)
		}
	}
	run := func(isolate bool) (string, error) {
		var out cappedBuffer
		out.max = c.maxOutput
		cmd := c.command(ctx, dir, isolate, &out, "-v")
		err := cmd.Run()
		return out.String(), err
	}
	c.isolated = isolationSupported
	text, err := run(c.isolated)
	if err != nil && c.isolated && isolationRefused(err) {
		c.log.Warn("rendergate: cannot create a network namespace for haproxy -c; checks run WITHOUT network isolation",
			"error", err.Error())
		c.isolated = false
		text, err = run(false)
	}
	if err != nil {
		return fmt.Errorf("rendergate: run %s -v in %s as %s: %w: %s", c.binary, c.scratch, c.userString(), err, strings.TrimSpace(text))
	}
	c.version, _, _ = strings.Cut(strings.TrimSpace(text), "\n")
	return nil
}

// Version is the first line of `haproxy -v`, e.g.
// "HAProxy version 3.4.7-1 2026/…".
func (c *HAProxyChecker) Version() string { return c.version }

// NetworkIsolated says whether checks run in a fresh network namespace
// (no interfaces but a down loopback). It is false when the namespace could
// not be created, and on systems other than Linux.
func (c *HAProxyChecker) NetworkIsolated() bool { return c.isolated }

func (c *HAProxyChecker) userString() string {
	if c.runAs == nil {
		return "the current user"
	}
	return fmt.Sprintf("uid %d gid %d", c.runAs.UID, c.runAs.GID)
}

// RunAs is the user checks run as, or nil for the controller's own user.
func (c *HAProxyChecker) RunAs() *User {
	if c.runAs == nil {
		return nil
	}
	u := *c.runAs
	return &u
}

// command builds the haproxy command: working directory dir, empty
// environment, stdin from /dev/null, output to w, its own process group
// (killed whole on cancel), the configured user, and a new network
// namespace when isolate is set.
func (c *HAProxyChecker) command(ctx context.Context, dir string, isolate bool, w io.Writer, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, c.binary, args...)
	cmd.Dir = dir
	cmd.Env = []string{} // non-nil and empty: nothing inherited
	cmd.Stdin = nil      // /dev/null
	cmd.Stdout, cmd.Stderr = w, w
	cmd.SysProcAttr = sysProcAttr(c.runAs, isolate)
	cmd.Cancel = func() error { return killProcessGroup(cmd.Process.Pid) }
	cmd.WaitDelay = time.Second
	return cmd
}

// Check lays out the output under a fresh scratch directory and runs
// `haproxy -c -dr -f haproxy.cfg` there. It returns nil when haproxy exits
// 0 (warnings included), a [*CheckError] when the tree is refused (haproxy
// exits non-zero, is killed by a signal or by the timeout, or the output
// cannot be laid out as a tree: a path that is not local, a duplicate path,
// no haproxy.cfg), and another error when the check could not run (ctx
// ended, scratch directory not writable, binary not executable).
func (c *HAProxyChecker) Check(ctx context.Context, out *renderplan.Output) error {
	if out == nil || out.Plan == nil {
		return errors.New("rendergate: check: output has no plan")
	}
	id := out.ID()
	refuse := func(reason string) error {
		return &CheckError{PlanID: id, ExitCode: -1, Reason: reason}
	}
	if reason := treeProblem(out); reason != "" {
		return refuse(reason)
	}
	if err := c.wait(ctx); err != nil {
		return fmt.Errorf("rendergate: check plan %s: %w", id, err)
	}
	start := time.Now()
	dir, err := os.MkdirTemp(c.scratch, "rendergate-")
	if err != nil {
		return fmt.Errorf("rendergate: check plan %s: %w", id, err)
	}
	defer func() {
		if err := os.RemoveAll(dir); err != nil {
			c.log.Warn("rendergate: remove scratch tree", "plan_id", id, "dir", dir, "error", err.Error())
		}
	}()
	if err := layOut(dir, out, c.runAs); err != nil {
		return fmt.Errorf("rendergate: check plan %s: lay out tree: %w", id, err)
	}

	budget := c.timeout - time.Since(start)
	if err := c.wait(ctx); err != nil {
		return fmt.Errorf("rendergate: check plan %s: %w", id, err)
	}

	// The timeout is a budget of haproxy's running time: a Pause stops
	// haproxy and the budget's clock together.
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	var timedOut atomic.Bool
	var output cappedBuffer
	output.max = c.maxOutput
	cmd := c.command(runCtx, dir, c.isolated, &output, "-c", "-dr", "-f", renderplan.ConfigPath)
	err = cmd.Start()
	if err == nil {
		rc := c.track(cmd.Process.Pid, budget, func() { timedOut.Store(true); cancel() })
		defer c.untrack(rc)
		// The check shares the cores with the data path (the agent's
		// applies, HAProxy itself): it runs at a lower CPU priority so
		// that it delays them as little as possible. It runs at the
		// default priority for the moment between exec and this call;
		// processes it starts inherit the new one. An interactive check
		// (Config.Interactive) keeps the caller's.
		if !c.interactive {
			if perr := lowerPriority(cmd.Process.Pid); perr != nil {
				c.log.Warn("rendergate: cannot lower the CPU priority of haproxy -c", "plan_id", id, "error", perr.Error())
			}
		}
		err = cmd.Wait()
	}
	text := output.String()
	c.log.Debug("rendergate: haproxy -c", "plan_id", id, "duration", time.Since(start), "error", errString(err))

	if err == nil {
		return nil
	}
	if ctx.Err() != nil { // the caller gave up: no verdict
		return fmt.Errorf("rendergate: check plan %s: %w", id, context.Cause(ctx))
	}
	alerts := alertsOf(text)
	if timedOut.Load() {
		return &CheckError{PlanID: id, ExitCode: -1, TimedOut: true, Alerts: alerts, Output: text,
			Reason: fmt.Sprintf("haproxy -c did not finish within %v", c.timeout)}
	}
	var exitErr *exec.ExitError
	if !errors.As(err, &exitErr) {
		return fmt.Errorf("rendergate: check plan %s: run haproxy -c: %w", id, err)
	}
	code := exitErr.ExitCode()
	reason := reasonOf(alerts, text, code)
	if code == -1 {
		reason = fmt.Sprintf("haproxy -c ended by %v", exitErr.ProcessState)
	}
	return &CheckError{PlanID: id, ExitCode: code, Reason: reason, Alerts: alerts, Output: text}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// cappedBuffer keeps the first max bytes written to it and counts the rest.
// os/exec serialises writes when Stdout and Stderr are the same pointer.
type cappedBuffer struct {
	buf     strings.Builder
	max     int
	dropped int
}

func (b *cappedBuffer) Write(p []byte) (int, error) {
	room := min(max(b.max-b.buf.Len(), 0), len(p))
	b.buf.Write(p[:room])
	b.dropped += len(p) - room
	return len(p), nil
}

// String returns the kept bytes, with a note of how many were dropped.
func (b *cappedBuffer) String() string {
	if b.dropped == 0 {
		return b.buf.String()
	}
	return fmt.Sprintf("%s\n[rendergate: %d more bytes of output dropped]\n", b.buf.String(), b.dropped)
}

// othersMayExecute says whether a user who is neither the owner nor in the
// group may execute path: every directory above it searchable by others
// and the file executable by others.
func othersMayExecute(path string) bool {
	for p := path; ; p = filepath.Dir(p) {
		fi, err := os.Stat(p)
		if err != nil || fi.Mode().Perm()&0o001 == 0 {
			return false
		}
		if p == filepath.Dir(p) {
			return true
		}
	}
}
