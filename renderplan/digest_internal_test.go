package renderplan

import (
	"bytes"
	"testing"

	"github.com/cespare/xxhash/v2"
)

func TestDigestHelpersAgreeWithDigestOf(t *testing.T) {
	inputs := [][]byte{nil, []byte("a"), []byte("backend be_app from web\n"), make([]byte, 100)}
	var sums []uint64
	for _, b := range inputs {
		sums = append(sums, xxhash.Sum64(b))
		d := DigestOf(b)
		if !isDigestOf(d, b) {
			t.Errorf("isDigestOf(DigestOf(%q), %q) = false", b, b)
		}
		if isDigestOf(d, append(b, 'x')) {
			t.Errorf("isDigestOf(DigestOf(%q), %q+\"x\") = true", b, b)
		}
	}
	for i, d := range digestsOf(sums) {
		if want := DigestOf(inputs[i]); d != want {
			t.Errorf("digestsOf()[%d] = %s, want %s", i, d, want)
		}
	}
}

func TestDigestOfPartsIsTheDigestOfTheirConcatenation(t *testing.T) {
	whole := bytes.Repeat([]byte("backend be_x\n    server s1 127.0.0.1:80\n"), 200)
	for _, cuts := range [][]int{{0}, {1, 2}, {31, 32, 33}, {100, 4000, len(whole)}} {
		var parts [][]byte
		prev := 0
		for _, c := range cuts {
			parts = append(parts, whole[prev:c])
			prev = c
		}
		parts = append(parts, whole[prev:])
		if got, want := DigestOfParts(parts...), DigestOf(whole); got != want {
			t.Errorf("cuts %v: %s, want %s", cuts, got, want)
		}
	}
	if DigestOfParts() != DigestOf(nil) {
		t.Error("no parts: not the digest of nothing")
	}
}
