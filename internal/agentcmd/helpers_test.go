package agentcmd

import (
	"os"
	"testing"
)

// childEnv, set to 1, makes the test binary run as haptic-agent (Main)
// instead of the tests: the tests that need an agent process to kill
// start os.Args[0] with it.
const childEnv = "HAPTIC_AGENTCMD_TEST_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		os.Exit(Main(append([]string{"haptic-agent"}, os.Args[1:]...), os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}
