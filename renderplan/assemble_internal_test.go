package renderplan

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// NewOutput's errors for duplicate backends depend on the order sorting
// leaves equal names in, so sortedOrder must give exactly the
// permutation that sorting the values does, equal elements included.
func TestSortedOrderIsThePermutationSortingTheValuesGives(t *testing.T) {
	type tagged struct {
		name string
		tag  int
	}
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 2, 12, 13, 50, 200, 1000, 5000} {
		for _, distinct := range []int{1, 3, n/2 + 1, 10 * (n + 1)} {
			values := make([]tagged, n)
			for i := range values {
				values[i] = tagged{name: fmt.Sprintf("be_%d", r.IntN(distinct)), tag: i}
			}
			if n%2 == 0 {
				slices.SortStableFunc(values[:n/2], func(a, b tagged) int { return strings.Compare(a.name, b.name) })
				for i := range values {
					values[i].tag = i
				}
			}
			order := sortedOrder(n, func(i, j int) int { return strings.Compare(values[i].name, values[j].name) })
			sorted := slices.Clone(values)
			sortFunc(sorted, func(a, b tagged) int { return strings.Compare(a.name, b.name) })
			for k := range sorted {
				if sorted[k].tag != order[k] {
					t.Fatalf("n=%d distinct=%d: position %d holds element %d, sortedOrder says %d", n, distinct, k, sorted[k].tag, order[k])
				}
			}
		}
	}
}
