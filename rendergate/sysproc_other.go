//go:build unix && !linux

package rendergate

import "syscall"

// isolationSupported: only Linux has network namespaces.
const isolationSupported = false

// sysProcAttr puts haproxy in its own process group and runs it as runAs.
// isolate is ignored.
func sysProcAttr(runAs *User, _ bool) *syscall.SysProcAttr { return processGroupAttr(runAs) }

func isolationRefused(error) bool { return false }
