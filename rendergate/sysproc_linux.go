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
	attr := processGroupAttr(runAs)
	attr.Pdeathsig = syscall.SIGKILL
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
