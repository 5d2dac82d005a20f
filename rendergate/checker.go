package rendergate

import (
	"errors"
	"fmt"
	"strings"
)

// CheckError is a refusal: the output is not a tree HAProxy would load.
// Reach it with errors.As. Reason is a one-line summary (the first
// [ALERT] line without its "[ALERT] (pid) : " prefix, the first output line
// when HAProxy printed no alert, or what was wrong before HAProxy ran);
// Alerts and Output are HAProxy's own words, verbatim.
type CheckError struct {
	// PlanID is the ID of the refused plan.
	PlanID string
	// ExitCode is haproxy's exit status: 1 for configuration errors, 2 for
	// a valid configuration that would not start ("no listener"). It is -1
	// when HAProxy did not exit by itself (TimedOut) or never ran (a tree
	// that cannot be laid out).
	ExitCode int
	// TimedOut says the check was killed after the checker's timeout.
	TimedOut bool
	// Reason is the one-line summary that Error quotes.
	Reason string
	// Alerts are the lines of Output that hold "[ALERT]", in order.
	Alerts []string
	// Output is what haproxy printed on stdout and stderr, cut at the
	// checker's output cap.
	Output string
}

func (e *CheckError) Error() string {
	return fmt.Sprintf("rendergate: plan %s refused: %s", e.PlanID, e.Reason)
}

// Verdict is the outcome of validating one plan.
type Verdict uint8

const (
	// VerdictUnknown means not validated, or the check could not run.
	VerdictUnknown Verdict = iota
	// VerdictPass means HAProxy accepts the tree.
	VerdictPass
	// VerdictRefused means HAProxy refuses the tree.
	VerdictRefused
)

func (v Verdict) String() string {
	switch v {
	case VerdictPass:
		return "pass"
	case VerdictRefused:
		return "refused"
	default:
		return "unknown"
	}
}

// VerdictOf maps a [renderplan.Checker] result to a verdict: nil passes, an error
// holding a [*CheckError] is a refusal, and any other error (the binary
// could not run, the scratch directory could not be written, the context
// ended) is [VerdictUnknown] — a broken checker must never revert pods.
func VerdictOf(err error) Verdict {
	if err == nil {
		return VerdictPass
	}
	var ce *CheckError
	if errors.As(err, &ce) {
		return VerdictRefused
	}
	return VerdictUnknown
}

// alertMarker marks the lines of haproxy's output that are errors.
const alertMarker = "[ALERT]"

// alertsOf returns the lines of output holding "[ALERT]", trimmed of
// trailing whitespace, in order.
func alertsOf(output string) []string {
	var alerts []string
	for line := range strings.Lines(output) {
		if strings.Contains(line, alertMarker) {
			alerts = append(alerts, strings.TrimRight(line, " \t\r\n"))
		}
	}
	return alerts
}

// reasonOf summarises a refusal: the first alert without its
// "[ALERT]    (pid) : " prefix, else the first non-empty output line.
func reasonOf(alerts []string, output string, exitCode int) string {
	if len(alerts) > 0 {
		return stripAlertPrefix(alerts[0])
	}
	for line := range strings.Lines(output) {
		if s := strings.TrimSpace(line); s != "" {
			return s
		}
	}
	return fmt.Sprintf("haproxy -c exited with status %d and printed nothing", exitCode)
}

// stripAlertPrefix turns "[ALERT]    (123) : config : x" into "config : x".
// A line of another shape is returned trimmed.
func stripAlertPrefix(line string) string {
	_, rest, ok := strings.Cut(line, alertMarker)
	if !ok {
		return strings.TrimSpace(line)
	}
	rest = strings.TrimLeft(rest, " \t")
	if strings.HasPrefix(rest, "(") {
		if i := strings.Index(rest, ")"); i >= 0 {
			rest = rest[i+1:]
		}
	}
	rest = strings.TrimLeft(rest, " \t")
	rest = strings.TrimPrefix(rest, ":")
	return strings.TrimSpace(rest)
}
