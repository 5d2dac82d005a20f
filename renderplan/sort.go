package renderplan

import (
	"slices"
	"strings"
)

// Renders usually hand NewOutput their backends, servers, map entries and
// files in order, or in order but for a few appended at the end (the
// template assembler keeps what it rendered before sorted and adds what
// is new). The helpers here find that in one pass and then sort only the
// tail, merging it in, instead of sorting everything.

// sortFunc is slices.SortFunc, after an O(n) check: renders usually emit
// backends, servers and files already in order, and sorting large
// structs moves a lot of memory for nothing.
func sortFunc[S ~[]E, E any](s S, cmp func(a, b E) int) {
	if !slices.IsSortedFunc(s, cmp) {
		slices.SortFunc(s, cmp)
	}
}

// sortedOrder returns the permutation that sortFunc applies to a slice of
// n elements when cmp(i, j) compares its elements i and j: element
// order[k] of the slice ends up at position k. Sorting indices instead
// of the elements gives exactly that permutation, equal elements
// included, because pdqsort's steps depend only on the results of the
// comparisons, never on the values moved.
//
// When the elements are distinct, the sorted permutation is the only one,
// so any sort gives it: then a sorted prefix followed by a shorter tail
// is sorted by merging the sorted tail into it. Equal elements found on
// the way send it back to sortFunc, whose order among them is the one
// promised.
func sortedOrder(n int, cmp func(i, j int) int) []int {
	return sortedOrderInto(make([]int, n), cmp)
}

// sortedOrderInto is sortedOrder(len(order), cmp), written into order.
func sortedOrderInto(order []int, cmp func(i, j int) int) []int {
	n := len(order)
	for i := range order {
		order[i] = i
	}
	k := sortedPrefix(order, cmp)
	if k == n {
		return order
	}
	if k < n/2 {
		slices.SortFunc(order, cmp)
		return order
	}
	tail := slices.Clone(order[k:])
	slices.SortFunc(tail, cmp)
	mergeTail(order, order[:k], tail, cmp)
	for i := 1; i < n; i++ {
		if cmp(order[i-1], order[i]) >= 0 {
			// Equal elements: sortFunc decides their order.
			for i := range order {
				order[i] = i
			}
			sortFunc(order, cmp)
			break
		}
	}
	return order
}

// sortedEntries returns a copy of e sorted by key, entries of one key
// (invalid) by value. This order is total on distinct entries, so the
// result is the same whatever the algorithm; equal entries cannot be
// told apart.
func sortedEntries(e []MapEntry) []MapEntry {
	k := sortedPrefix(e, compareEntries)
	if k == len(e) {
		return slices.Clone(e)
	}
	if k < len(e)/2 {
		c := slices.Clone(e)
		slices.SortFunc(c, compareEntries)
		return c
	}
	tail := slices.Clone(e[k:])
	slices.SortFunc(tail, compareEntries)
	out := make([]MapEntry, len(e))
	mergeTail(out, e[:k], tail, compareEntries)
	return out
}

func compareEntries(a, b MapEntry) int {
	if c := strings.Compare(a.Key, b.Key); c != 0 {
		return c
	}
	return strings.Compare(a.Value, b.Value)
}

// sortedPrefix returns the length of the longest prefix of s that is
// sorted by cmp.
func sortedPrefix[E any](s []E, cmp func(a, b E) int) int {
	for i := 1; i < len(s); i++ {
		if cmp(s[i-1], s[i]) > 0 {
			return i
		}
	}
	return len(s)
}

// mergeTail merges the sorted head and the sorted, shorter tail into dst,
// which has room for both and may be head's own backing array (head is
// then its prefix: each element is written at or after where it is
// read). Each tail element goes before the head elements equal to it.
// It binary-searches the head for each tail element and copies the head
// in chunks between them: O(len(tail)·log(len(head))) comparisons.
func mergeTail[E any](dst, head, tail []E, cmp func(a, b E) int) {
	// Work from the back, so that dst may share head's array: head
	// elements only move towards the end.
	i, k := len(head), len(head)+len(tail)
	for j := len(tail) - 1; j >= 0; j-- {
		pos, _ := slices.BinarySearchFunc(head[:i], tail[j], cmp)
		n := i - pos
		k -= n
		copy(dst[k:k+n], head[pos:i])
		k--
		dst[k] = tail[j]
		i = pos
	}
	if i > 0 && &dst[0] != &head[0] {
		copy(dst[:i], head[:i])
	}
}

// backendNamed orders a backend against a name, for binary searches of
// backends sorted by name.
func backendNamed(be Backend, name string) int { return strings.Compare(be.Name, name) }
