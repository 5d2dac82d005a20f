package local

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A temporary work dir goes to /dev/shm when that is a tmpfs and TMPDIR
// is unset, and to TMPDIR when it is set; TempRoot says which.
func TestATemporaryWorkDirIsOnATmpfsUnlessTMPDIRSaysOtherwise(t *testing.T) {
	if !writableTmpfs("/dev/shm") {
		t.Skip("this machine has no writable tmpfs at /dev/shm")
	}
	// A short TMPDIR: t.TempDir is too deep for the sockets' paths.
	short, err := os.MkdirTemp("/tmp", "w")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(short) })
	for _, tc := range []struct {
		name, tmpdir, want string
	}{
		{"TMPDIR unset", "", "/dev/shm"},
		{"TMPDIR set", short, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("TMPDIR", tc.tmpdir)
			want := tc.want
			if want == "" {
				want = tc.tmpdir
			}
			if got := TempRoot(); got != want {
				t.Errorf("TempRoot() = %s; want %s", got, want)
			}
			p, cleanup, err := workDir("")
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(p.work, want+string(filepath.Separator)) {
				t.Errorf("work dir %s; want it under %s", p.work, want)
			}
			cleanup()
			if _, err := os.Stat(p.work); !os.IsNotExist(err) {
				t.Errorf("the temporary work dir %s is still there after cleanup: %v", p.work, err)
			}
		})
	}
}
