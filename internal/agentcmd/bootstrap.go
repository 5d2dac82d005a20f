package agentcmd

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/haptic-io/haptic/internal/agent"
)

// agentBootstrapCommand is `haptic agent bootstrap`, the init container of
// an HAProxy pod: it writes the bootstrap haproxy.cfg HAProxy starts on,
// unless the tree already has a config, and exits.
func agentBootstrapCommand() *cli.Command {
	return &cli.Command{
		Name:  "bootstrap",
		Usage: "write the bootstrap haproxy.cfg (503 until the first plan) unless the tree has one",
		Description: "Writes <base-dir>/haproxy.cfg with the worker stats socket and a frontend answering 503 on\n" +
			"each --bind, only when the file does not exist: a tree the agent committed is never touched.\n" +
			"Run it before HAProxy starts (an init container), since HAProxy re-reads the same file at every\n" +
			"reload. A relative --stats-socket is relative to HAProxy's working directory.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "base-dir", Usage: "HAProxy base directory (haproxy.cfg, maps/, certs/, general/)", EnvVars: []string{"HAPTIC_BASE_DIR"}, Required: true},
			&cli.StringFlag{Name: "stats-socket", Usage: "HAProxy worker stats socket the agent connects to", EnvVars: []string{"HAPTIC_STATS_SOCKET"}, Required: true},
			&cli.StringSliceFlag{Name: "bind", Usage: "bind address of the 503 frontend (repeatable)", EnvVars: []string{"HAPTIC_BOOTSTRAP_BIND"}},
		},
		Action: func(c *cli.Context) error {
			written, err := agent.WriteBootstrap(c.String("base-dir"), c.String("stats-socket"), c.StringSlice("bind"))
			if err != nil {
				return err
			}
			if written {
				fmt.Fprintf(c.App.Writer, "bootstrap config written to %s\n", c.String("base-dir"))
			} else {
				fmt.Fprintf(c.App.Writer, "%s already has a config: left as it is\n", c.String("base-dir"))
			}
			return nil
		},
	}
}
