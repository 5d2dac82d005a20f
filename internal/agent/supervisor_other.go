//go:build !linux

package agent

import (
	"errors"
	"syscall"
)

// setParentDeathSignal does nothing where PR_SET_PDEATHSIG does not
// exist: a master whose supervisor was killed keeps running until the
// next [StartSupervisor] on its master socket stops it.
func setParentDeathSignal(*syscall.SysProcAttr) {}

// processExists reports whether pid names a process (a zombie counts).
func processExists(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
