package minicluster

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"testing"
)

// envSandbox marks the re-executed test binary; envNoSandbox carries the
// reason the parent could not create the sandbox.
const (
	envSandbox   = "HAPTIC_MINICLUSTER_SANDBOX"
	envNoSandbox = "HAPTIC_MINICLUSTER_NO_SANDBOX"
	// envSandboxReady is set once the sandbox is set up.
	envSandboxReady = "HAPTIC_MINICLUSTER_SANDBOX_READY"
)

// Main is meant to be called from TestMain. As root, it re-executes the test
// binary in a new network and mount namespace (CLONE_NEWNET|CLONE_NEWNS) and
// exits with its status; inside, it makes every mount private, mounts a tmpfs
// on /run/netns (so pod namespaces never show on the host), brings lo up and
// runs the tests. Under -short, or when the sandbox cannot be made, it runs
// the tests in place and [InSandbox] reports why.
func Main(m *testing.M) {
	os.Exit(Run(m))
}

// Run is [Main] without the exit: it returns the exit code, so that a
// TestMain can release what its tests shared before it exits. In the
// parent process (the one that made the sandbox) no test ran.
func Run(m *testing.M) int {
	if os.Getenv(envSandbox) == "1" {
		// Processes the sandboxed binary starts itself (fuzz workers)
		// inherit both variables and share its namespaces: no second setup.
		if os.Getenv(envSandboxReady) != "1" {
			if err := setupSandbox(); err != nil {
				fmt.Fprintf(os.Stderr, "minicluster: set up sandbox: %v\n", err)
				return 1
			}
			_ = os.Setenv(envSandboxReady, "1")
		}
		return m.Run()
	}
	flag.Parse()
	if testing.Short() {
		_ = os.Setenv(envNoSandbox, "not created under -short")
		return m.Run()
	}
	if os.Geteuid() != 0 {
		_ = os.Setenv(envNoSandbox, "network namespaces need root")
		return m.Run()
	}
	self, err := os.Executable()
	if err != nil {
		_ = os.Setenv(envNoSandbox, "find test binary: "+err.Error())
		return m.Run()
	}
	cmd := exec.Command(self, os.Args[1:]...)
	cmd.Env = append(os.Environ(), envSandbox+"=1")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags: syscall.CLONE_NEWNET | syscall.CLONE_NEWNS,
		Pdeathsig:  syscall.SIGKILL,
	}
	err = cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &exit) && exit.Exited():
		return exit.ExitCode()
	case errors.As(err, &exit):
		fmt.Fprintf(os.Stderr, "minicluster: sandboxed test binary: %v\n", err)
		return 1
	default:
		// Clone refused (no CAP_SYS_ADMIN, seccomp): run unsandboxed.
		_ = os.Setenv(envNoSandbox, "create network namespace: "+err.Error())
		return m.Run()
	}
}

// setupSandbox runs inside the new namespaces.
func setupSandbox() error {
	if err := syscall.Mount("", "/", "", syscall.MS_REC|syscall.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make mounts private: %w", err)
	}
	if err := os.MkdirAll("/run/netns", 0o755); err != nil {
		return fmt.Errorf("create /run/netns: %w", err)
	}
	if err := syscall.Mount("minicluster-netns", "/run/netns", "tmpfs", 0, "mode=0755"); err != nil {
		return fmt.Errorf("mount tmpfs on /run/netns: %w", err)
	}
	if out, err := exec.Command("ip", "link", "set", "lo", "up").CombinedOutput(); err != nil {
		return fmt.Errorf("ip link set lo up: %w: %s", err, out)
	}
	return nil
}

// InSandbox reports whether the test binary runs in the private network
// namespace made by [Main]; if not, reason says why.
func InSandbox() (ok bool, reason string) {
	if os.Getenv(envSandbox) == "1" {
		return true, ""
	}
	if r := os.Getenv(envNoSandbox); r != "" {
		return false, r
	}
	return false, "TestMain does not call minicluster.Main"
}
