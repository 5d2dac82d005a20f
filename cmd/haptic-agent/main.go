// Command haptic-agent is the agent of an HAProxy pod alone: `haptic
// agent` without the controller, the Kubernetes client or the templating
// engine linked in, which keeps its memory small in every pod. See
// package agentcmd for its flags and subcommands.
package main

import (
	"os"

	"github.com/haptic-io/haptic/internal/agentcmd"
)

func main() {
	os.Exit(agentcmd.Main(os.Args, os.Stdout, os.Stderr))
}
