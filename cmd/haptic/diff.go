package main

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/haptic-io/haptic/agentapi"
	"github.com/haptic-io/haptic/deployplan"
)

// diffCommand answers "will this change reload?" offline: it renders two
// resource directories with the same config and prints deployplan's
// decision for a pod that runs the first one.
func diffCommand() *cli.Command {
	return &cli.Command{
		Name:  "diff",
		Usage: "render two resource directories and print whether the change is runtime, file_only or reload",
		Description: "Renders --from and --to with the same libraries and config, then diffs the plans the way the\n" +
			"controller does for a pod running --from on --haproxy-version with an agent that runs every op.\n" +
			"Prints the verdict, the reasons and the runtime ops (-o text) or the decision as JSON (-o json).\n" +
			"With --fail-on-reload the exit code is 3 when the verdict is reload.",
		Flags: []cli.Flag{
			configFlag(false),
			librariesFlag(),
			&cli.StringFlag{Name: "from", Usage: "directory of manifests the pod runs now", EnvVars: []string{"HAPTIC_DIFF_FROM"}, Required: true},
			&cli.StringFlag{Name: "to", Usage: "directory of manifests to move to", EnvVars: []string{"HAPTIC_DIFF_TO"}, Required: true},
			&cli.StringFlag{Name: "haproxy-version", Usage: "HAProxy version of the pod (3.0, 3.2, 3.4, or a full version)", Value: "3.4", EnvVars: []string{"HAPTIC_HAPROXY_VERSION"}},
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "text or json", Value: "text"},
			&cli.BoolFlag{Name: "fail-on-reload", Usage: "exit with code 3 when the verdict is reload"},
		},
		Action: func(c *cli.Context) error {
			format := c.String("output")
			if format != "text" && format != "json" {
				return fmt.Errorf("diff: --output %q is not text or json", format)
			}
			cfg, err := loadConfig(c.String("libraries"), c.String("config"))
			if err != nil {
				return err
			}
			from, fromProblems, err := renderDir(c.Context, cfg, c.String("from"))
			if err != nil {
				return fmt.Errorf("diff: render --from: %w", err)
			}
			to, toProblems, err := renderDir(c.Context, cfg, c.String("to"))
			if err != nil {
				return fmt.Errorf("diff: render --to: %w", err)
			}
			for _, p := range fromProblems {
				fmt.Fprintf(c.App.ErrWriter, "problem (from): %s\n", p)
			}
			for _, p := range toProblems {
				fmt.Fprintf(c.App.ErrWriter, "problem (to): %s\n", p)
			}
			d := deployplan.Diff(to.Plan, deployplan.Baseline{
				Plan:           from.Plan,
				HAProxyVersion: c.String("haproxy-version"),
				AgentOps:       agentapi.OpKinds(),
			})
			if err := printDecision(c.App.Writer, format, d); err != nil {
				return err
			}
			if c.Bool("fail-on-reload") && d.Verdict == deployplan.VerdictReload {
				return cli.Exit("diff: the change reloads HAProxy", 3)
			}
			return nil
		},
	}
}

func printDecision(w io.Writer, format string, d deployplan.Decision) error {
	if format == "json" {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(d)
	}
	_, err := io.WriteString(w, d.String())
	return err
}
