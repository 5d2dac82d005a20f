package renderplan

import (
	"math"
	"strconv"
	"testing"
)

func TestAppendIntWritesWhatStrconvWrites(t *testing.T) {
	ns := []int{math.MinInt, -1e9, -100, -1, 1e9 - 1, 1e9, 1e9 + 1, math.MaxInt}
	for n := range 100000 {
		ns = append(ns, n, n*9973)
	}
	for _, n := range ns {
		if got, want := string(appendInt([]byte("x"), n)), "x"+strconv.Itoa(n); got != want {
			t.Fatalf("appendInt(%d) = %q, want %q", n, got, want)
		}
	}
}
