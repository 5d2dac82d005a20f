package agent

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
)

// setParentDeathSignal makes the kernel send the master SIGTERM when the
// thread that starts it ends (see [Supervisor.start]). SIGTERM is
// HAProxy's hard stop: the master stops its workers and exits, and the
// ports are free for the next start.
func setParentDeathSignal(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGTERM }

// processExists reports whether pid names a process that has not ended:
// a zombie (ended, not reaped yet by whoever inherited it) has ended.
func processExists(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// The state follows the command name, which is in parentheses and
	// may hold anything: take the field after the last ')'.
	i := bytes.LastIndexByte(b, ')')
	return i < 0 || i+2 >= len(b) || b[i+2] != 'Z'
}
