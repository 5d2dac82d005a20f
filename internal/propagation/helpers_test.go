package propagation_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/haptic-io/haptic/internal/propagation"
)

// TestMain lets the test binary act as the benchmark's child processes
// when its first argument names one (go test never passes such an
// argument), so that tests can run them: "probe-client --url URL" runs
// [propagation.RunProbeClient], "echo-servers --listen ADDR…" runs
// [propagation.RunEchoServers].
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && (os.Args[1] == "probe-client" || os.Args[1] == "echo-servers") {
		os.Exit(actAsChild(os.Args[1], os.Args[2:]))
	}
	os.Exit(m.Run())
}

// actAsChild runs the child process name on stdin and stdout and returns
// the exit code.
func actAsChild(name string, args []string) int {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	url := fs.String("url", "", "base URL")
	var listen []string
	fs.Func("listen", "echo server address", func(s string) error { listen = append(listen, s); return nil })
	if err := fs.Parse(args); err != nil {
		return 2
	}
	var err error
	if name == "probe-client" {
		err = propagation.RunProbeClient(context.Background(), propagation.ProbeClientConfig{URL: *url}, os.Stdin, os.Stdout)
	} else {
		err = propagation.RunEchoServers(context.Background(), listen, os.Stdin, os.Stdout)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		return 1
	}
	return 0
}

// waitTimeout bounds every wait for local mode to do something; it guards
// against hangs and is never an assertion on speed.
const waitTimeout = 30 * time.Second

// tWriter writes to the test log.
type tWriter struct{ t *testing.T }

func (w tWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
