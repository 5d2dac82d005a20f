//go:build !linux

package local

// memoryTempDir is "": a temporary work dir goes where os.MkdirTemp puts
// it.
func memoryTempDir() string { return "" }
