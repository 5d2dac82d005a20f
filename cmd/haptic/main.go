package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/haptic-io/haptic/internal/agentcmd"
)

func main() {
	if err := newApp(os.Stdout, os.Stderr).Run(os.Args); err != nil {
		fmt.Fprintf(os.Stderr, "haptic: %v\n", err)
		os.Exit(exitCode(err))
	}
}

// newApp builds the application. Adding a subcommand is one file with its
// constructor plus one line here.
func newApp(stdout, stderr io.Writer) *cli.App {
	return &cli.App{
		Name:  "haptic",
		Usage: "template-driven HAProxy controller for Kubernetes",
		Commands: []*cli.Command{
			renderCommand(),
			validateCommand(),
			benchmarkCommand(),
			diffCommand(),
			agentcmd.Command(),
			localCommand(),
			controllerCommand(),
			checkerCommand(),
		},
		Writer:    stdout,
		ErrWriter: stderr,
		// Set so that Run returns errors instead of exiting: only main exits.
		ExitErrHandler: func(*cli.Context, error) {},
	}
}

// exitCode is the process exit code for err: the cli.ExitCoder's code, else 1.
func exitCode(err error) int {
	var ec cli.ExitCoder
	if errors.As(err, &ec) && ec.ExitCode() != 0 {
		return ec.ExitCode()
	}
	return 1
}
