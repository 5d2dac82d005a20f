package chart_test

import (
	"fmt"
	"os"
	"os/exec"
	"runtime/debug"
	"strings"
	"testing"
)

// TestGoReadsAByteCountGOMEMLIMIT: the chart sets GOMEMLIMIT from
// resourceFieldRef limits.memory with divisor 1, which the kubelet writes
// as a plain byte count ("536870912" for 512Mi). The Go runtime must take
// that as bytes: the test runs itself with it and reads the limit back.
func TestGoReadsAByteCountGOMEMLIMIT(t *testing.T) {
	if os.Getenv("HAPTIC_PRINT_MEMORY_LIMIT") == "1" {
		fmt.Printf("limit=%d\n", debug.SetMemoryLimit(-1))
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestGoReadsAByteCountGOMEMLIMIT$")
	cmd.Env = append(os.Environ(), "HAPTIC_PRINT_MEMORY_LIMIT=1", "GOMEMLIMIT=536870912")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(string(out), "limit=536870912\n") {
		t.Errorf("GOMEMLIMIT=536870912 gave:\n%s\nwant limit=536870912 (512 MiB)", out)
	}
}
