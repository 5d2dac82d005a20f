package main

import (
	"os"
	"os/signal"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/haptic-io/haptic/internal/propagation"
)

// benchmarkProbeClientCommand is `haptic benchmark probe-client`, hidden:
// `haptic benchmark propagation` runs it as a child process to poll the
// new routes from outside its own busy process.
func benchmarkProbeClientCommand() *cli.Command {
	return &cli.Command{
		Name:   "probe-client",
		Usage:  "poll hosts read from stdin until their first 200 (run by `benchmark propagation`)",
		Hidden: true,
		Description: "Reads one host per line on stdin and polls each, one after the other: GET --url/ with that\n" +
			"Host header every millisecond, until the first 200 or 30s. Writes JSON lines on stdout:\n" +
			`{"event":"polling","host":H} after the host's first answer, then {"event":"ok",...} with` + "\n" +
			"at_unix_nano (wall clock of the first 200), requests and unexpected (answers that are neither\n" +
			`404 nor 200, transport errors included), or {"event":"timeout",...}. Exits when stdin ends.`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "url", Usage: "base URL to poll, e.g. http://127.0.0.1:8080", Required: true},
		},
		Action: func(c *cli.Context) error {
			ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
			defer stop()
			return propagation.RunProbeClient(ctx, propagation.ProbeClientConfig{URL: c.String("url")}, c.App.Reader, c.App.Writer)
		},
	}
}
