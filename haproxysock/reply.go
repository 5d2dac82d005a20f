package haproxysock

import (
	"strconv"
	"strings"
)

// expectKind says how a command's success shows in its reply.
type expectKind uint8

const (
	// expectEmpty: success replies nothing (set/add/del map, set server …).
	expectEmpty expectKind = iota
	// expectLast: the last non-empty line starts with text (3.4 may put
	// asynchronous server-state lines before it).
	expectLast
	// expectContains: some line starts with text ("Success!" after
	// "Committing …").
	expectContains
	// expectOutput: any reply that is not an error (show commands).
	expectOutput
)

type expectation struct {
	kind expectKind
	text string
}

var (
	wantEmpty  = expectation{kind: expectEmpty}
	wantOutput = expectation{kind: expectOutput}
)

func wantLast(s string) expectation     { return expectation{kind: expectLast, text: s} }
func wantContains(s string) expectation { return expectation{kind: expectContains, text: s} }

// errorSeverity is syslog LOG_ERR: "set severity-output number" prefixes
// messages with "[N]: " and N <= 3 marks an error.
const errorSeverity = 3

// splitSeverity removes the "[N]: " prefixes HAProxy adds in
// "severity-output number" mode and returns the text and the lowest
// severity seen (-1 when there was none).
func splitSeverity(reply string) (string, int) {
	sev := -1
	lines := strings.Split(reply, "\n")
	for i, l := range lines {
		if len(l) < 5 || l[0] != '[' {
			continue
		}
		end := strings.Index(l, "]: ")
		if end < 2 || end > 3 {
			continue
		}
		n, err := strconv.Atoi(l[1:end])
		if err != nil || n < 0 || n > 7 {
			continue
		}
		if sev < 0 || n < sev {
			sev = n
		}
		lines[i] = l[end+3:]
	}
	return strings.Join(lines, "\n"), sev
}

// knownErrorPrefixes begin HAProxy's error messages in replies that carry
// no severity (commands routed through the master CLI).
var knownErrorPrefixes = []string{
	"Unknown ", "No such ", "Can't ", "Cannot ", "Missing ", "Permission denied",
	"Failed", "Invalid ", "Malformed ", "This command ", "Require ", "Usage: ",
	"Only ", "Backend must ", "Server still ", "Proxy is disabled", "Version number ",
	"entry not found", "Key not found", "Wait delay expired", "Interrupted",
	"The command ", "Error ", "'",
}

// classify decides whether reply is a success for c. It returns nil or a
// *CommandError.
func classify(c Command, reply string) error {
	text, sev := splitSeverity(reply)
	text = strings.TrimRight(text, "\n")
	fail := func(cause error) error {
		return &CommandError{Command: c.String(), Reply: text, Err: cause}
	}
	first := strings.TrimSpace(firstLine(text))
	if strings.HasPrefix(first, "Unknown command") {
		return fail(ErrUnsupported)
	}
	if sev >= 0 && sev <= errorSeverity {
		return fail(nil)
	}
	last := lastNonEmptyLine(text)
	switch c.expect.kind {
	case expectEmpty:
		if strings.TrimSpace(text) != "" {
			return fail(nil)
		}
	case expectLast:
		if !strings.HasPrefix(last, c.expect.text) {
			return fail(nil)
		}
	case expectContains:
		found := false
		for _, l := range strings.Split(text, "\n") {
			if strings.HasPrefix(strings.TrimSpace(l), c.expect.text) {
				found = true
				break
			}
		}
		if !found {
			return fail(nil)
		}
	case expectOutput:
		if sev < 0 {
			for _, p := range knownErrorPrefixes {
				if strings.HasPrefix(first, p) {
					return fail(nil)
				}
			}
		}
	}
	return nil
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

func lastNonEmptyLine(s string) string {
	lines := strings.Split(s, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(lines[i]); l != "" {
			return l
		}
	}
	return ""
}
