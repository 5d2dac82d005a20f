package renderplan

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// sortCase is a slice in one of the orders renders hand over.
type sortCase struct {
	name   string
	values []int
}

// sortCases returns slices of n values from distinct choices: sorted,
// sorted with a shuffled tail of every length, reversed and shuffled.
func sortCases(r *rand.Rand, n, distinct int) []sortCase {
	sorted := make([]int, n)
	for i := range sorted {
		sorted[i] = r.IntN(distinct)
	}
	slices.Sort(sorted)
	cases := []sortCase{{"sorted", sorted}}
	for _, tail := range []int{1, 2, n / 10, n / 3, n / 2, n/2 + 1, n - 1, n} {
		if tail < 1 || tail > n {
			continue
		}
		v := slices.Clone(sorted)
		// Move tail random values to the end, in random order.
		for i := 0; i < tail; i++ {
			j := r.IntN(n - i)
			x := v[j]
			v = append(v[:j], v[j+1:]...)
			v = append(v, x)
		}
		cases = append(cases, sortCase{fmt.Sprintf("tail %d", tail), v})
	}
	rev := slices.Clone(sorted)
	slices.Reverse(rev)
	shuffled := slices.Clone(sorted)
	r.Shuffle(n, func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	return append(cases, sortCase{"reversed", rev}, sortCase{"shuffled", shuffled})
}

// sortedOrder merges a sorted tail into a sorted prefix when the values
// are distinct; it must still give exactly sortFunc's permutation, equal
// values included (then it falls back to sortFunc).
func TestSortedOrderWithASortedPrefixIsSortFuncsPermutation(t *testing.T) {
	type tagged struct{ v, tag int }
	r := rand.New(rand.NewPCG(9, 10))
	for _, n := range []int{0, 1, 2, 3, 13, 100, 1000} {
		for _, distinct := range []int{1, 3, n + 1, 1 << 30} {
			for _, c := range sortCases(r, n, distinct) {
				values := make([]tagged, n)
				for i, v := range c.values {
					values[i] = tagged{v, i}
				}
				order := sortedOrder(n, func(i, j int) int { return cmp.Compare(values[i].v, values[j].v) })
				sorted := slices.Clone(values)
				sortFunc(sorted, func(a, b tagged) int { return cmp.Compare(a.v, b.v) })
				for k := range sorted {
					if sorted[k].tag != order[k] {
						t.Fatalf("n=%d distinct=%d %s: position %d holds element %d, sortedOrder says %d", n, distinct, c.name, k, sorted[k].tag, order[k])
					}
				}
			}
		}
	}
}

func TestSortedEntriesIsAFullSort(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for _, n := range []int{0, 1, 2, 3, 13, 100, 1000} {
		for _, distinct := range []int{1, 3, n + 1, 1 << 30} {
			for _, c := range sortCases(r, n, distinct) {
				entries := make([]MapEntry, n)
				for i, v := range c.values {
					// Keys of equal values tie; the value then decides.
					entries[i] = MapEntry{Key: fmt.Sprintf("k%012d", v), Value: fmt.Sprintf("v%d", r.IntN(3))}
				}
				in := slices.Clone(entries)
				got := sortedEntries(entries)
				want := slices.Clone(entries)
				slices.SortStableFunc(want, compareEntries)
				if !slices.Equal(got, want) {
					t.Fatalf("n=%d distinct=%d %s: sortedEntries differs from a full sort", n, distinct, c.name)
				}
				if !slices.Equal(entries, in) {
					t.Fatalf("n=%d distinct=%d %s: sortedEntries changed its argument", n, distinct, c.name)
				}
				if n > 0 && &got[0] == &entries[0] {
					t.Fatalf("n=%d %s: sortedEntries returned its argument, not a copy", n, c.name)
				}
			}
		}
	}
}

func TestMergeTailMergesIntoItsOwnArrayOrAnother(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	for range 2000 {
		head := make([]int, r.IntN(20))
		tail := make([]int, r.IntN(20))
		for i := range head {
			head[i] = r.IntN(10)
		}
		for i := range tail {
			tail[i] = r.IntN(10)
		}
		slices.Sort(head)
		slices.Sort(tail)
		want := slices.Sorted(slices.Values(append(slices.Clone(head), tail...)))

		other := make([]int, len(head)+len(tail))
		mergeTail(other, head, tail, cmp.Compare[int])
		shared := append(slices.Clone(head), make([]int, len(tail))...)
		mergeTail(shared, shared[:len(head)], tail, cmp.Compare[int])
		if !slices.Equal(other, want) || !slices.Equal(shared, want) {
			t.Fatalf("merge of %v and %v: got %v (other array) and %v (own array), want %v", head, tail, other, shared, want)
		}
	}
}
