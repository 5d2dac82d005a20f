package haproxysock

import (
	"fmt"
	"strings"
)

// ReloadResult is the master's answer to "reload".
type ReloadResult struct {
	// Success is the "Success=1|0" status line.
	Success bool
	// Log is the startup log printed after the "--" line.
	Log string
	// Alerts are the log's [ALERT] lines.
	Alerts []string
}

// ParseReload parses the reply to the master's "reload": "Success=1" or
// "Success=0", a "--" line, then the startup log. It returns an error only
// when the reply does not have that shape.
func ParseReload(reply string) (ReloadResult, error) {
	reply = strings.TrimLeft(reply, "\n")
	status, rest, _ := strings.Cut(reply, "\n")
	var r ReloadResult
	switch strings.TrimSpace(status) {
	case "Success=1":
		r.Success = true
	case "Success=0":
	default:
		return ReloadResult{}, fmt.Errorf("%w: reload reply starts with %q", ErrProtocol, status)
	}
	if sep, log, ok := strings.Cut(rest, "\n"); strings.TrimSpace(sep) == "--" {
		if ok {
			rest = log
		} else {
			rest = ""
		}
	}
	r.Log = strings.TrimRight(rest, "\n")
	for _, l := range strings.Split(r.Log, "\n") {
		if strings.HasPrefix(l, "[ALERT]") {
			r.Alerts = append(r.Alerts, strings.TrimSpace(l))
		}
	}
	return r, nil
}
