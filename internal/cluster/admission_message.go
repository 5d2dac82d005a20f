package cluster

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/haptic-io/haptic/rendergate"
	"github.com/haptic-io/haptic/renderplan"
	"github.com/haptic-io/haptic/templating"
)

// Bounds of a refusal's parts: the apiserver prints the message whole
// after `admission webhook "…" denied the request: `.
const (
	maxListedProblems = 8
	maxListedAlerts   = 5
	maxQuotedLine     = 200
)

// problemsMessage says which problems of ref the render found, one per
// line, in the templates' words (they name the field).
func problemsMessage(ref templating.ObjectRef, ps []templating.Problem) string {
	var b strings.Builder
	fmt.Fprintf(&b, "HAPTIC refuses %s: the templates would leave it out of the HAProxy configuration, in part or whole:", ref)
	for i, p := range ps {
		if i == maxListedProblems {
			fmt.Fprintf(&b, "\n- and %d more problems", len(ps)-i)
			break
		}
		fmt.Fprintf(&b, "\n- %s: %s", p.Reason, p.Message)
	}
	return clip(b.String(), maxMessageBytes)
}

// alertLocation finds "[haproxy.cfg:57]" (HAProxy's "parsing [file:line]")
// in an alert.
var alertLocation = regexp.MustCompile(`\[([^\]\s:]+):([0-9]+)\]`)

// alertPrefix is "[ALERT]    (1234) : ".
var alertPrefix = regexp.MustCompile(`^\s*\[ALERT\]\s*(\([0-9]+\))?\s*:?\s*`)

// checkMessage says that HAProxy refuses the configuration with ref, in
// HAProxy's words, and quotes the lines its alerts point at.
func checkMessage(ref templating.ObjectRef, ce *rendergate.CheckError, out *renderplan.Output) string {
	var b strings.Builder
	fmt.Fprintf(&b, "HAPTIC refuses %s: with it, HAProxy refuses the configuration (haproxy -c):", ref)
	alerts := ce.Alerts
	if len(alerts) == 0 {
		alerts = []string{ce.Reason}
	}
	quoted := map[string]bool{}
	for i, a := range alerts {
		if i == maxListedAlerts {
			fmt.Fprintf(&b, "\n- and %d more alerts", len(alerts)-i)
			break
		}
		text := alertPrefix.ReplaceAllString(a, "")
		fmt.Fprintf(&b, "\n- %s", text)
		for _, m := range alertLocation.FindAllStringSubmatch(text, 2) {
			loc := m[1] + ":" + m[2]
			if quoted[loc] {
				continue
			}
			quoted[loc] = true
			n, _ := strconv.Atoi(m[2])
			if line, ok := fileLine(out, m[1], n); ok {
				fmt.Fprintf(&b, "\n  %s: %q", loc, clip(line, maxQuotedLine))
			}
		}
	}
	return clip(b.String(), maxMessageBytes)
}

// fileLine returns line n (from 1) of the output's file at path.
func fileLine(out *renderplan.Output, path string, n int) (string, bool) {
	if out == nil || n < 1 {
		return "", false
	}
	for _, f := range out.Files {
		if f.Path != path {
			continue
		}
		body := f.Body
		for i := 1; i < n; i++ {
			j := bytes.IndexByte(body, '\n')
			if j < 0 {
				return "", false
			}
			body = body[j+1:]
		}
		line, _, _ := bytes.Cut(body, []byte("\n"))
		return string(line), true
	}
	return "", false
}

// clip cuts s to at most n bytes, on a rune boundary, marking the cut
// with "…".
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	const mark = "…"
	cut := max(n-len(mark), 0)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + mark
}
