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
	if os.Getenv("TMPDIR") != "" || !writableTmpfs(shm) {
		return ""
	}
	return shm
}

// writableTmpfs says whether dir is a tmpfs this user may create files
// in.
func writableTmpfs(dir string) bool {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil || st.Type != tmpfsMagic {
		return false
	}
	const writeSearch = 0x2 | 0x1 // W_OK | X_OK
	return syscall.Access(dir, writeSearch) == nil
}
