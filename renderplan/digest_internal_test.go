package renderplan

import (
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
