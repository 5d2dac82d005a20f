package haproxytest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

const (
	// startTimeout bounds the wait for both sockets to answer after start.
	startTimeout = 10 * time.Second
	// stopGrace is how long the master gets after SIGTERM before the
	// process group is killed.
	stopGrace = 5 * time.Second
)

// Options configure [Start]. The zero value starts a minimal HAProxy.
type Options struct {
	// Config returns the haproxy.cfg text that follows the global section;
	// dir is the instance's absolute directory (for map and certificate
	// paths). Nil means a minimal config: a defaults section and one
	// frontend on a free 127.0.0.1 port ([Instance.Port]) that answers 200
	// "ok" via http-request return.
	Config func(dir string) string
	// Files are written under the instance directory before start:
	// relative path -> content. Parent directories are created.
	Files map[string]string
	// Global are extra lines for the global section.
	Global []string
}

// Instance is one running HAProxy (master and workers) started by [Start].
// Its methods may be called from several goroutines.
type Instance struct {
	Series string // "3.0", "3.2" or "3.4"
	Binary string // absolute path of the haproxy binary
	// Version is the version from `haproxy -v`, e.g. "3.4.7-1".
	Version string
	// Dir is the instance's absolute temporary directory; haproxy.cfg lives
	// here and HAProxy runs with it as working directory. It is removed in
	// t.Cleanup after HAProxy stopped.
	Dir          string
	ConfigPath   string
	MasterSocket string // master CLI unix socket (-S)
	StatsSocket  string // worker stats socket: level admin, expose-fd listeners
	MasterPID    int
	// Port is the minimal config's frontend port on 127.0.0.1; 0 when
	// Options.Config was set.
	Port int
	// LogPath is the file in Dir that receives HAProxy's stdout and stderr.
	LogPath string

	cmd     *exec.Cmd
	done    chan struct{} // closed once the master has been reaped
	waitErr error         // the master's exit; read only after done is closed
}

// Start starts HAProxy series in master-worker mode: `haproxy -W -S
// <dir>/master.sock,mode,600 -f haproxy.cfg` in the foreground, as a child
// process with its own process group and with cwd=Dir. The global section
// holds `stats socket <dir>/stats.sock mode 600 level admin expose-fd
// listeners`, `stats timeout 1h` and `hard-stop-after 10s`, plus
// Options.Global. Start waits (at most 10 s) until both the worker stats
// socket and the master socket answer, failing the test with HAProxy's output
// otherwise, and registers a t.Cleanup that stops HAProxy by PID: SIGTERM to
// the master, SIGKILL to the process group after a 5 s grace. HAProxy's
// stdout and stderr go to LogPath; they are logged when the test failed.
func Start(t testing.TB, series string, o Options) *Instance {
	t.Helper()
	bin := Binary(t, series)
	version, err := binaryVersion(bin)
	if err != nil {
		t.Fatalf("start haproxy %s: %v", series, err)
	}
	// Not t.TempDir: unix socket paths must stay under 108 bytes, and long
	// test names make long temporary directories.
	dir, err := os.MkdirTemp("", "haptic-hx-")
	if err != nil {
		t.Fatalf("start haproxy %s: %v", series, err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	if dir, err = filepath.EvalSymlinks(dir); err != nil {
		t.Fatalf("start haproxy %s: %v", series, err)
	}
	inst := &Instance{
		Series:       series,
		Binary:       bin,
		Version:      version,
		Dir:          dir,
		ConfigPath:   filepath.Join(dir, "haproxy.cfg"),
		MasterSocket: filepath.Join(dir, "master.sock"),
		StatsSocket:  filepath.Join(dir, "stats.sock"),
		LogPath:      filepath.Join(dir, "haproxy.log"),
	}
	for rel, content := range o.Files {
		inst.WriteFile(t, rel, content)
	}
	inst.WriteFile(t, "haproxy.cfg", inst.config(t, o))

	log, err := os.Create(inst.LogPath)
	if err != nil {
		t.Fatalf("start haproxy %s: %v", series, err)
	}
	cmd := exec.Command(bin, "-W", "-S", inst.MasterSocket+",mode,600", "-f", inst.ConfigPath)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err = cmd.Start()
	_ = log.Close() // the child holds its own descriptor
	if err != nil {
		t.Fatalf("start haproxy %s: %v", series, err)
	}
	inst.cmd = cmd
	inst.MasterPID = cmd.Process.Pid
	inst.done = make(chan struct{})
	go func() {
		inst.waitErr = cmd.Wait()
		close(inst.done)
	}()
	t.Cleanup(func() { inst.stop(t) })

	if err := inst.waitReady(startTimeout); err != nil {
		t.Fatalf("start haproxy %s in %s: %v\nhaproxy.cfg:\n%s\nhaproxy output:\n%s",
			series, dir, err, readFile(inst.ConfigPath), inst.Output())
	}
	return inst
}

// config builds haproxy.cfg: the global section, then Options.Config or the
// minimal config.
func (i *Instance) config(t testing.TB, o Options) string {
	var b strings.Builder
	b.WriteString("global\n")
	fmt.Fprintf(&b, "    stats socket %s mode 600 level admin expose-fd listeners\n", i.StatsSocket)
	b.WriteString("    stats timeout 1h\n")
	b.WriteString("    hard-stop-after 10s\n")
	for _, l := range o.Global {
		fmt.Fprintf(&b, "    %s\n", strings.TrimSpace(l))
	}
	b.WriteString("\n")
	if o.Config != nil {
		b.WriteString(o.Config(i.Dir))
		b.WriteString("\n")
		return b.String()
	}
	i.Port = FreePort(t)
	fmt.Fprintf(&b, `defaults
    mode http
    timeout connect 5s
    timeout client 30s
    timeout server 30s

frontend fe_main
    bind 127.0.0.1:%d
    http-request return status 200 content-type text/plain string ok
`, i.Port)
	return b.String()
}

// waitReady polls both sockets until they answer, HAProxy exits or timeout
// passes.
func (i *Instance) waitReady(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	var last error
	for time.Now().Before(deadline) {
		select {
		case <-i.done:
			return fmt.Errorf("haproxy exited during start: %w", i.waitErr)
		default:
		}
		last = i.ready()
		if last == nil {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("sockets not ready after %v: %w", timeout, last)
}

func (i *Instance) ready() error {
	const probe = time.Second
	info, err := send(i.StatsSocket, "show info", false, probe)
	if err != nil {
		return fmt.Errorf("stats socket: %w", err)
	}
	if !strings.Contains(info, "Version:") {
		return fmt.Errorf("stats socket: unexpected reply to show info: %q", info)
	}
	proc, err := send(i.MasterSocket, "show proc", true, probe)
	if err != nil {
		return fmt.Errorf("master socket: %w", err)
	}
	if !strings.Contains(proc, "worker") {
		return fmt.Errorf("master socket: no worker in show proc: %q", proc)
	}
	return nil
}

// stop ends HAProxy: SIGTERM to the master, SIGKILL to the process group
// after stopGrace, then SIGKILL to anything left in the group.
func (i *Instance) stop(t testing.TB) {
	pgid := i.MasterPID // Setpgid: the master leads its own group
	_ = i.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-i.done:
	case <-time.After(stopGrace):
		t.Logf("haproxy %s (pid %d) ignored SIGTERM for %v; killing its process group", i.Series, i.MasterPID, stopGrace)
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		select {
		case <-i.done:
		case <-time.After(stopGrace):
			t.Errorf("haproxy %s (pid %d) did not exit after SIGKILL", i.Series, i.MasterPID)
		}
	}
	// Workers normally exit with the master; kill any straggler. The group
	// id cannot be reused while a member of the group lives.
	if syscall.Kill(-pgid, 0) == nil {
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
	}
	if t.Failed() {
		t.Logf("haproxy %s output (%s):\n%s", i.Series, i.LogPath, i.Output())
	}
}

// Exited reports whether the master process has exited, and with what.
func (i *Instance) Exited() (bool, error) {
	select {
	case <-i.done:
		return true, i.waitErr
	default:
		return false, nil
	}
}

// Output returns what HAProxy has written to stdout and stderr so far.
func (i *Instance) Output() string { return readFile(i.LogPath) }

// WriteFile writes content to rel under Dir, creating parent directories.
// rel must be a relative path that stays inside Dir.
func (i *Instance) WriteFile(t testing.TB, rel, content string) {
	t.Helper()
	if err := writeUnder(i.Dir, rel, content); err != nil {
		t.Fatalf("write %s: %v", rel, err)
	}
}

func writeUnder(dir, rel, content string) error {
	if !filepath.IsLocal(rel) {
		return errors.New("path must be relative and inside the instance directory")
	}
	path := filepath.Join(dir, rel)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(content), 0o644)
}

// binaryVersion returns the version `haproxy -v` prints, e.g. "3.4.7-1".
func binaryVersion(bin string) (string, error) {
	out, err := exec.Command(bin, "-v").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("%s -v: %w: %s", bin, err, out)
	}
	return parseVersion(string(out))
}

// parseVersion reads the version from the first line of `haproxy -v`:
// "HAProxy version 3.4.7-1 2026/10/14 - https://haproxy.org/".
func parseVersion(out string) (string, error) {
	first, _, _ := strings.Cut(out, "\n")
	f := strings.Fields(first)
	for k := 0; k+1 < len(f); k++ {
		if strings.EqualFold(f[k], "version") {
			return f[k+1], nil
		}
	}
	return "", fmt.Errorf("no version in %q", first)
}

func readFile(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Sprintf("(cannot read %s: %v)", path, err)
	}
	return string(b)
}
