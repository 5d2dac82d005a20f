package main

import (
	"io"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// withHeapHeadroom runs startHeapGovernor under a one-flag app with args.
func withHeapHeadroom(t *testing.T, args ...string) error {
	t.Helper()
	app := &cli.App{
		Writer: io.Discard, ErrWriter: io.Discard,
		Flags: []cli.Flag{heapHeadroomFlag()},
		Action: func(c *cli.Context) error {
			stop, err := startHeapGovernor(c)
			if err != nil {
				return err
			}
			stop()
			return nil
		},
	}
	return app.Run(append([]string{"haptic"}, args...))
}

func TestHeapHeadroomTakesAQuantityAndZeroTurnsItOff(t *testing.T) {
	before := debug.SetGCPercent(-1)
	debug.SetGCPercent(before)
	for _, args := range [][]string{nil, {"--heap-headroom", "32Mi"}, {"--heap-headroom", "0"}, {"--heap-headroom", "100000000"}} {
		if err := withHeapHeadroom(t, args...); err != nil {
			t.Errorf("%q: %v", args, err)
		}
		if got := debug.SetGCPercent(before); got != before {
			t.Errorf("%q: GOGC after stop = %d, want %d", args, got, before)
		}
	}
}

func TestHeapHeadroomRefusesWhatIsNotAByteCount(t *testing.T) {
	for _, v := range []string{"lots", "-1Mi", "1.5"} {
		err := withHeapHeadroom(t, "--heap-headroom", v)
		if err == nil || !strings.Contains(err.Error(), "--heap-headroom") {
			t.Errorf("--heap-headroom %s: err = %v, want one naming the flag", v, err)
		}
	}
}
