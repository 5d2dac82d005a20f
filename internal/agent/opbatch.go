package agent

import "github.com/haptic-io/haptic/agentapi"

// opBatches splits an apply's ops, in the planner's safe order, into the
// runs that may share one round trip on the stats socket, as [lo, hi)
// index pairs covering ops in order.
//
// HAProxy runs every command of a batch, whatever happened to the ones
// before it, while a batch per op stops at the first refusal. So only ops
// whose later neighbours cannot hurt traffic when an earlier one fails
// share a batch:
//
//   - the ops that build a backend this apply adds (backend.add, the
//     server ops on it, its publish): nothing routes to it until a map
//     entry, which comes in a later phase, so a half-built backend serves
//     nothing before the fallback reload replaces it;
//   - consecutive map upserts (add, set), and consecutive map deletes:
//     each points one key at a target the earlier phases made ready, or
//     takes one key away, so any subset of them is as safe as the prefix
//     a batch per op would leave.
//
// Everything else runs alone: a server's maint, address, ready sequence
// on a backend that serves must stop where it fails, map replaces and
// certificates need answers between commands, and deletes may be deferred.
func opBatches(ops []agentapi.Op) [][2]int {
	added := map[string]bool{}
	for _, op := range ops {
		if op.Kind == agentapi.OpAddBackend {
			added[op.Backend] = true
		}
	}
	var out [][2]int
	for lo := 0; lo < len(ops); {
		c := batchClass(ops[lo], added)
		hi := lo + 1
		for c != batchAlone && hi < len(ops) && batchClass(ops[hi], added) == c {
			hi++
		}
		out = append(out, [2]int{lo, hi})
		lo = hi
	}
	return out
}

// batchKind says which ops may share a batch: ops of one kind other than
// batchAlone, next to each other.
type batchKind int

const (
	batchAlone batchKind = iota
	batchNewBackend
	batchMapUpserts
	batchMapDeletes
)

func batchClass(op agentapi.Op, added map[string]bool) batchKind {
	switch op.Kind {
	case agentapi.OpAddBackend, agentapi.OpAddServer, agentapi.OpSetServerState, agentapi.OpSetServerAddr,
		agentapi.OpSetServerWeight, agentapi.OpEnableHealth, agentapi.OpPublishBackend:
		if added[op.Backend] {
			return batchNewBackend
		}
	case agentapi.OpAddMapEntry, agentapi.OpSetMapEntry:
		return batchMapUpserts
	case agentapi.OpDelMapEntry:
		return batchMapDeletes
	}
	return batchAlone
}
