package deployplan

import (
	"cmp"
	"slices"
	"strings"

	"github.com/haptic-io/haptic/agentapi/runtimeop"
)

// sortOps puts ops in the safe apply order: by phase, then by target, and
// for one target in the order they were emitted (a server's maint, addr,
// ready must stay in that order; so must a certificate's set and commit,
// since HAProxy holds one certificate transaction at a time).
func sortOps(ops []runtimeop.Op) {
	slices.SortStableFunc(ops, func(a, b runtimeop.Op) int {
		if c := cmp.Compare(a.Kind.Phase(), b.Kind.Phase()); c != 0 {
			return c
		}
		return strings.Compare(a.Target(), b.Target())
	})
}
