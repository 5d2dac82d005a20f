package agentcmd

import (
	"errors"
	"fmt"
	"io"

	"github.com/urfave/cli/v2"
)

// App is the haptic-agent binary: [Command]'s flags, action and
// subcommands at the root, so `haptic-agent --base-dir …` runs what
// `haptic agent --base-dir …` runs.
func App(stdout, stderr io.Writer) *cli.App {
	c := Command()
	return &cli.App{
		Name:        "haptic-agent",
		Usage:       c.Usage,
		Description: c.Description,
		Flags:       c.Flags,
		Action:      c.Action,
		Commands:    c.Subcommands,
		Writer:      stdout,
		ErrWriter:   stderr,
		// Set so that Run returns errors instead of exiting: only Main's
		// caller exits.
		ExitErrHandler: func(*cli.Context, error) {},
	}
}

// Main runs [App] on args (os.Args) and returns the process's exit code,
// having written an error to stderr.
func Main(args []string, stdout, stderr io.Writer) int {
	if err := App(stdout, stderr).Run(args); err != nil {
		fmt.Fprintf(stderr, "haptic-agent: %v\n", err)
		return exitCode(err)
	}
	return 0
}

// exitCode is the process exit code for err: the cli.ExitCoder's code,
// else 1.
func exitCode(err error) int {
	var ec cli.ExitCoder
	if errors.As(err, &ec) && ec.ExitCode() != 0 {
		return ec.ExitCode()
	}
	return 1
}
