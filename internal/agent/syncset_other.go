//go:build !linux

package agent

import "os"

// startWriteback does nothing where sync_file_range does not exist.
func startWriteback(*os.File) {}

// datasync makes f durable (fsync: there is no portable fdatasync).
func datasync(f *os.File) error { return f.Sync() }
