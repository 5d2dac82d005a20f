package templating

import (
	"fmt"
	"math/rand/v2"
	"net/netip"
	"testing"

	"github.com/haptic-io/haptic/renderplan"
)

// backend skips re-validating servers that come from a "service" key, so
// what resolveServers builds must pass serverProblem with unique names
// whatever the endpoints: this checks dedupeServers on colliding inputs.
func TestResolvedServersAreValidAndUniqueByConstruction(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	names := []string{"a", "a-10-0-0-2-80", "a-10-0-0-2-80-10-0-0-2-80", "b", "pod;x", "_", "ep-10-0-0-1"}
	addrs := []string{"10.0.0.1", "10.0.0.2", "2001:db8::1", "::ffff:10.0.0.2", "10.0.0.2"}
	for round := 0; round < 2000; round++ {
		var in []renderplan.Server
		for i := rng.IntN(8); i > 0; i-- {
			a := netip.MustParseAddr(addrs[rng.IntN(len(addrs))])
			port := []int{80, 8080}[rng.IntN(2)]
			in = append(in, renderplan.Server{Name: SanitizeName(names[rng.IntN(len(names))]), Address: a.String(), Port: port, Weight: renderplan.DefaultWeight})
		}
		desc := fmt.Sprint(in)
		out := dedupeServers(in)
		seen := map[string]bool{}
		for i, s := range out {
			if p := serverProblem(s); p != "" {
				t.Fatalf("input %s: server %+v: %s", desc, s, p)
			}
			if seen[s.Name] {
				t.Fatalf("input %s: name %q twice in %+v", desc, s.Name, out)
			}
			seen[s.Name] = true
			if i > 0 && out[i-1].Name > s.Name {
				t.Fatalf("input %s: not sorted by name: %+v", desc, out)
			}
		}
	}
}
