package agent

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// lockFileName is the lock file in BaseDir (hidden, so never part of the
// tree). It holds the PID of the agent that holds it.
const lockFileName = ".haptic.lock"

// LockError means another process holds the lock of the base directory:
// a second agent (or a second `haptic local`) on the same tree. Reach it
// with errors.As.
type LockError struct {
	// Path is the lock file.
	Path string
	// PID is the process that holds it, as the file says; 0 when it
	// does not say.
	PID int
}

func (e *LockError) Error() string {
	if e.PID == 0 {
		return fmt.Sprintf("%s is locked by another process", e.Path)
	}
	return fmt.Sprintf("%s is locked by process %d", e.Path, e.PID)
}

// dirLock is an exclusive flock(2) on a lock file, held for as long as
// the file stays open. The kernel releases it when the process ends,
// killed or not, so a stale lock file never blocks a restart.
type dirLock struct{ f *os.File }

// lockDir takes the lock of dir without waiting and writes this
// process's PID into it. A lock another process holds is a *LockError.
func lockDir(dir string) (*dirLock, error) {
	path := filepath.Join(dir, lockFileName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		defer f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, &LockError{Path: path, PID: holder(f)}
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	// The file is rewritten in place, never removed: a removal could let
	// a third process lock a new file while a second still waits on the
	// old one.
	pid := strconv.Itoa(os.Getpid()) + "\n"
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(pid), 0)
	}
	return &dirLock{f: f}, nil
}

// holder reads the PID a lock file names; 0 when it names none.
func holder(f *os.File) int {
	b := make([]byte, 32)
	n, _ := f.ReadAt(b, 0)
	pid, err := strconv.Atoi(strings.TrimSpace(string(b[:n])))
	if err != nil || pid <= 0 {
		return 0
	}
	return pid
}

// release drops the lock; nil is a no-op.
func (l *dirLock) release() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}
