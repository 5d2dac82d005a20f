package main

import (
	"os"
	"os/signal"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/haptic-io/haptic/internal/propagation"
)

// benchmarkEchoServersCommand is `haptic benchmark echo-servers`, hidden:
// `haptic benchmark propagation` runs it as a child process so that the
// routes' backends answer from outside its own busy process.
func benchmarkEchoServersCommand() *cli.Command {
	return &cli.Command{
		Name:   "echo-servers",
		Usage:  "serve echo backends until stdin ends (run by `benchmark propagation`)",
		Hidden: true,
		Description: "Starts one echo server per --listen (127.0.0.1:0 picks a port; each answers 200 with the body\n" +
			"\"echo <addr> <method> <host><path>\"), writes {\"event\":\"listening\",\"echo\":[addresses]} on stdout,\n" +
			"and serves until stdin ends.",
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "listen", Usage: "address of one echo server (repeat)", Required: true},
		},
		Action: func(c *cli.Context) error {
			ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
			defer stop()
			return propagation.RunEchoServers(ctx, c.StringSlice("listen"), c.App.Reader, c.App.Writer)
		},
	}
}
