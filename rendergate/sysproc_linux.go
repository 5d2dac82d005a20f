package rendergate

import (
	"errors"
	"os"
	"syscall"
)

// isolationSupported: Linux can put a check in its own network namespace.
const isolationSupported = true

// sysProcAttr puts haproxy in its own process group, kills it when the
// controller thread that started it dies, runs it as runAs, and, with
// isolate, in a new network namespace. As root that is CLONE_NEWNET; as
// another user it is CLONE_NEWUSER|CLONE_NEWNET with the user mapped to
// itself, which works where unprivileged user namespaces are allowed.
func sysProcAttr(runAs *User, isolate bool) *syscall.SysProcAttr {
	attr := &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if runAs != nil {
		attr.Credential = &syscall.Credential{Uid: runAs.UID, Gid: runAs.GID, NoSetGroups: false}
	}
	if !isolate {
		return attr
	}
	if os.Geteuid() == 0 {
		attr.Cloneflags = syscall.CLONE_NEWNET
		return attr
	}
	uid, gid := os.Geteuid(), os.Getegid()
	attr.Cloneflags = syscall.CLONE_NEWUSER | syscall.CLONE_NEWNET
	attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
	attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
	attr.GidMappingsEnableSetgroups = false
	attr.Credential = nil // already this user
	return attr
}

// isolationRefused says whether a start failed because the namespace
// could not be created (no CAP_SYS_ADMIN, user namespaces disabled or
// exhausted, seccomp).
func isolationRefused(err error) bool {
	return errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EINVAL) ||
		errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EUSERS) ||
		errors.Is(err, syscall.EACCES) && os.Geteuid() != 0
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
