package main

import (
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/haptic-io/haptic/rendergate"
)

func checkerCommand() *cli.Command {
	return &cli.Command{
		Name:  "checker",
		Usage: "serve the controller's haproxy -c checks on a Unix socket",
		Description: "Runs haproxy -c on the trees the controller sends over --socket (its --checker-socket), so that\n" +
			"the checks of user templates run in a container that holds none of the controller's credentials:\n" +
			"run it beside the controller, sharing only the socket's directory, with no service-account token\n" +
			"mounted. Each check runs as rendergate does in-process (empty environment, own process group,\n" +
			"timeout, network namespace where the kernel allows it).",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "socket", Required: true, Usage: "Unix socket to serve on (mode 0660)", EnvVars: []string{"HAPTIC_CHECKER_SOCKET"}},
			&cli.StringFlag{Name: "haproxy", Value: "haproxy", Usage: "haproxy binary", EnvVars: []string{"HAPTIC_HAPROXY_BINARY"}},
			&cli.StringFlag{Name: "scratch-dir", Usage: "directory of the check trees (default: the system's temporary directory)", EnvVars: []string{"HAPTIC_SCRATCH_DIR"}},
			&cli.DurationFlag{Name: "timeout", Value: rendergate.DefaultTimeout, Usage: "bound of one check", EnvVars: []string{"HAPTIC_CHECK_TIMEOUT"}},
			&cli.StringFlag{Name: "log-level", Value: "info", Usage: "debug, info, warn or error", EnvVars: []string{"HAPTIC_LOG_LEVEL"}},
		},
		Action: func(c *cli.Context) error {
			var level slog.Level
			if err := level.UnmarshalText([]byte(c.String("log-level"))); err != nil {
				return cli.Exit(fmt.Sprintf("--log-level: %v", err), 2)
			}
			log := slog.New(slog.NewTextHandler(c.App.ErrWriter, &slog.HandlerOptions{Level: level}))
			ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
			defer stop()
			srv, err := rendergate.NewCheckServer(rendergate.Config{Binary: c.String("haproxy"), ScratchDir: c.String("scratch-dir"),
				Timeout: c.Duration("timeout"), Log: log})
			if err != nil {
				return err
			}
			l, err := rendergate.ListenUnix(c.String("socket"))
			if err != nil {
				return err
			}
			log.Info("checker serving", "socket", c.String("socket"), "haproxy", srv.Checker().Version(),
				"network_isolated", srv.Checker().NetworkIsolated())
			return srv.Serve(ctx, l)
		},
	}
}
