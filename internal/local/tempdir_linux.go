package local

import (
	"os"
	"syscall"
)

const tmpfsMagic = 0x01021994

// memoryTempDir is where a temporary work dir goes: /dev/shm when TMPDIR
// is unset and /dev/shm is a tmpfs this user may write to, else "" (the
// default of os.MkdirTemp). The agent fsyncs its tree on every change,
// and on a disk those fsyncs wait behind whatever else the machine
// writes (the HAProxy pods use a tmpfs for the same reason).
func memoryTempDir() string {
	const shm = "/dev/shm"
	if os.Getenv("TMPDIR") != "" {
		return ""
	}
	var st syscall.Statfs_t
	if err := syscall.Statfs(shm, &st); err != nil || st.Type != tmpfsMagic {
		return ""
	}
	const writeSearch = 0x2 | 0x1 // W_OK | X_OK
	if syscall.Access(shm, writeSearch) != nil {
		return ""
	}
	return shm
}
