package deployplan

import (
	"time"

	"github.com/haptic-io/haptic/agentapi/runtimeop"
	"github.com/haptic-io/haptic/renderplan"
)

// DefaultMaxOps bounds the ops of one apply when [Baseline.MaxOps] is 0.
// At the measured ~9 µs per command it is about 0.2 s of socket work.
const DefaultMaxOps = 20000

// Cost model, measured on a 2-vCPU VM with HAProxy 3.4.7 (see
// haproxy-runtime-facts.md §0, §4, §5, §9):
//   - 1,000 dynamic backends = 5,000 pipelined commands took 43 ms: ~9 µs
//     per command;
//   - 10,000 map entries in payload chunks took 4–25 ms: ~2 µs per entry;
//   - a reload serves the new config after ~86 ms with no backend, 146 ms
//     with 3,000 (2 servers each): ~20 µs per backend;
//   - a reload with a 1,000,000-entry map takes ~0.55 s: ~0.55 µs per entry.
const (
	costPerCommand      = 9 * time.Microsecond
	costPerPayloadEntry = 2 * time.Microsecond
	reloadBaseCost      = 86 * time.Millisecond
	reloadPerBackend    = 20 * time.Microsecond
	reloadPerMapEntry   = 550 * time.Nanosecond
)

// runtimeCost estimates the time the agent spends running ops.
func runtimeCost(ops []runtimeop.Op) time.Duration {
	var d time.Duration
	for _, o := range ops {
		switch o.Kind {
		case runtimeop.OpDelServer: // maint, wait srv-removable, del
			d += 3 * costPerCommand
		case runtimeop.OpDelBackend: // wait be-removable, del
			d += 2 * costPerCommand
		case runtimeop.OpReplaceMap: // prepare, payload chunks, commit
			d += 2*costPerCommand + time.Duration(len(o.Entries))*costPerPayloadEntry
		default:
			d += costPerCommand
		}
	}
	return d
}

// reloadCost estimates the time from "reload" until the new worker serves.
func reloadCost(p *renderplan.Plan) time.Duration {
	d := reloadBaseCost + time.Duration(len(p.Backends))*reloadPerBackend
	for _, m := range p.Maps {
		d += time.Duration(len(m.Entries)) * reloadPerMapEntry
	}
	return d
}

// mapReplaceWorthIt says whether an unordered map with changes entry
// changes and total entries afterwards is cheaper to replace atomically
// than to update entry by entry. Small changes always go entry by entry.
func mapReplaceWorthIt(changes, total int) bool {
	const minChanges = 64
	if changes < minChanges {
		return false
	}
	perEntry := time.Duration(changes) * costPerCommand
	replace := 2*costPerCommand + time.Duration(total)*costPerPayloadEntry
	return replace < perEntry
}
