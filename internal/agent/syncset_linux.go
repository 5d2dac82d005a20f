package agent

import (
	"os"

	"golang.org/x/sys/unix"
)

// startWriteback starts writing f's dirty pages without waiting
// (sync_file_range). It is only a hint that lets the writeback of a batch
// overlap; [datasync] is what makes the data durable.
func startWriteback(f *os.File) {
	_ = unix.SyncFileRange(int(f.Fd()), 0, 0, unix.SYNC_FILE_RANGE_WRITE)
}

// datasync makes f's data durable with the metadata needed to read it
// back (size, blocks), not its timestamps (fdatasync).
func datasync(f *os.File) error { return unix.Fdatasync(int(f.Fd())) }
