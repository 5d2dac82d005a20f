//go:build unix

package rendergate

import (
	"errors"
	"os"
	"syscall"
)

// processGroupAttr puts haproxy in its own process group and runs it as
// runAs; sysProcAttr adds what the platform has beyond that.
func processGroupAttr(runAs *User) *syscall.SysProcAttr {
	attr := &syscall.SysProcAttr{Setpgid: true}
	if runAs != nil {
		attr.Credential = &syscall.Credential{Uid: runAs.UID, Gid: runAs.GID}
	}
	return attr
}

// killProcessGroup kills haproxy and anything it started (Lua's
// os.execute, io.popen).
// A group that is already gone is os.ErrProcessDone, as os/exec expects.
func killProcessGroup(pid int) error {
	err := syscall.Kill(-pid, syscall.SIGKILL)
	if errors.Is(err, syscall.ESRCH) {
		return os.ErrProcessDone
	}
	return err
}

// stopProcessGroup and continueProcessGroup pause and continue haproxy
// and anything it started (see [Pauser]).
func stopProcessGroup(pid int) error     { return syscall.Kill(-pid, syscall.SIGSTOP) }
func continueProcessGroup(pid int) error { return syscall.Kill(-pid, syscall.SIGCONT) }

// checkNice is the nice value a check runs at: the lowest, so that a
// check (about 130 ms of CPU at 3,000 backends) yields the CPU to the data
// path (HAProxy, the agent, the controller's reconciliations, at the
// default 0) whenever they want it; at nice 10 it still took a tenth.
const checkNice = 19

// lowerPriority sets the nice value of process pid to checkNice.
func lowerPriority(pid int) error {
	return syscall.Setpriority(syscall.PRIO_PROCESS, pid, checkNice)
}
