package runtimeop

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// FuzzDecodeOps checks the strict decoder: it never panics, whatever it
// accepts is valid, and what it accepts survives an encode/decode round
// trip unchanged.
func FuzzDecodeOps(f *testing.F) {
	for _, o := range sampleOps() {
		b, err := json.Marshal([]Op{o})
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		ops, err := DecodeOps(b)
		if err != nil {
			return
		}
		for i, o := range ops {
			if err := o.Validate(); err != nil {
				t.Fatalf("op %d decoded but does not validate: %v", i, err)
			}
			_ = o.String()
		}
		enc, err := json.Marshal(ops)
		if err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		back, err := DecodeOps(enc)
		if err != nil {
			t.Fatalf("decode of re-encoded %s: %v", enc, err)
		}
		if diff := cmp.Diff(ops, back, cmp.Transformer("norm", normOp)); diff != "" {
			t.Fatalf("round trip (-want +got):\n%s", diff)
		}
	})
}

// normOp maps empty slices to nil: JSON's omitempty drops them.
func normOp(o Op) Op {
	if len(o.Keywords) == 0 {
		o.Keywords = nil
	}
	if len(o.Entries) == 0 {
		o.Entries = nil
	}
	if len(o.SSLOptions) == 0 {
		o.SSLOptions = nil
	}
	if len(o.SNIFilters) == 0 {
		o.SNIFilters = nil
	}
	return o
}
