package deployplan

import (
	"strconv"
	"strings"

	"github.com/haptic-io/haptic/agentapi/runtimeop"
	"github.com/haptic-io/haptic/renderplan"
)

// Verdict says how a plan reaches a pod. It is the agent contract's
// verdict, so a [Decision] travels to the agent as it is.
type Verdict = runtimeop.Verdict

// Verdicts, from the least to the most disruptive.
const (
	// VerdictNoop: nothing changed.
	VerdictNoop = runtimeop.VerdictNoop
	// VerdictFileOnly: write the files; the running HAProxy need not learn
	// anything.
	VerdictFileOnly = runtimeop.VerdictFileOnly
	// VerdictRuntime: write the files and run the ops on the worker socket.
	VerdictRuntime = runtimeop.VerdictRuntime
	// VerdictReload: write the files and reload.
	VerdictReload = runtimeop.VerdictReload
)

// Decision is how one plan reaches one pod.
type Decision struct {
	Verdict Verdict `json:"verdict"`
	// Ops are the runtime ops in apply order; empty unless Verdict is
	// VerdictRuntime.
	Ops []runtimeop.Op `json:"ops,omitempty"`
	// Files is the next plan's full file set, sorted by path: the agent
	// writes it whatever the verdict, so that the next reload reproduces
	// what runtime ops did.
	Files []renderplan.File `json:"files"`
	// Reasons explain the verdict: for a reload, what forces it; otherwise
	// every change, in plan order (core, profiles, backends, maps, files).
	Reasons []Reason `json:"reasons,omitempty"`
}

// Reason explains one part of a decision.
type Reason struct {
	// Subject names the object: "backend be_api", "server be_api/pod-a",
	// "map maps/hosts.map", "file certs/a.pem", "baseline".
	Subject string `json:"subject"`
	// Message says what changed and why it leads to Verdict.
	Message string  `json:"message"`
	Verdict Verdict `json:"verdict"`
}

// String returns "subject: message → verdict".
func (r Reason) String() string {
	return r.Subject + ": " + r.Message + " → " + string(r.Verdict)
}

// String renders the decision for people: the verdict, one line per
// reason, one line per op and the number of files.
func (d Decision) String() string {
	var b strings.Builder
	b.WriteString("verdict ")
	b.WriteString(string(d.Verdict))
	b.WriteByte('\n')
	for _, r := range d.Reasons {
		b.WriteString("reason ")
		b.WriteString(r.String())
		b.WriteByte('\n')
	}
	for _, o := range d.Ops {
		b.WriteString("op ")
		b.WriteString(o.String())
		b.WriteByte('\n')
	}
	b.WriteString("files ")
	b.WriteString(strconv.Itoa(len(d.Files)))
	b.WriteByte('\n')
	return b.String()
}
