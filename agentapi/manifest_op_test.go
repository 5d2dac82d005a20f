package agentapi

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCanonicalOpsTakeTheShortcut(t *testing.T) {
	for _, o := range sampleOps() {
		raw, err := json.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		var got Op
		if !decodeCanonicalOp(raw, &got) {
			t.Errorf("%s: the encoding Client sends does not take the shortcut", raw)
			continue
		}
		if d := cmp.Diff(o, got); d != "" {
			t.Errorf("%s (-sent +decoded):\n%s", raw, d)
		}
	}
}

func TestTheShortcutLeavesOtherSpellingsToTheChecks(t *testing.T) {
	for _, raw := range []string{
		`{"KIND":"backend.publish","backend":"be_api"}`, // decodes without regard to case; the checks refuse it
		`{"kind": "backend.publish", "backend": "be_api"}`,
		`{"backend":"be_api","kind":"backend.publish"}`,
		`{"kind":"backend.publish","backend":"be_api","port":0}`,
	} {
		var o Op
		if decodeCanonicalOp(json.RawMessage(raw), &o) {
			t.Errorf("%s took the shortcut", raw)
		}
	}
	var o Op
	nack := decodeOp(json.RawMessage(`{"KIND":"backend.publish","backend":"be_api"}`), &o)
	if nack == nil || !nack.Unsupported || !strings.Contains(nack.Message, `unknown field "KIND"`) {
		t.Errorf("upper-case field: %v, want an unsupported unknown field", nack)
	}
}

// FuzzDecodeOpShortcut: decodeOp, shortcut included, answers every input
// as decodeOpChecked does.
func FuzzDecodeOpShortcut(f *testing.F) {
	for _, o := range sampleOps() {
		b, err := json.Marshal(o)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"KIND":"backend.publish","backend":"be_api"}`))
	f.Add([]byte(`{"kind":"backend.publish","backend":"be_api","kind":"backend.publish"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var got, want Op
		gotNack, wantNack := decodeOp(b, &got), decodeOpChecked(b, &want)
		if d := cmp.Diff(wantNack, gotNack); d != "" {
			t.Fatalf("%q: nack (-checked +decodeOp):\n%s", b, d)
		}
		if d := cmp.Diff(want, got); wantNack == nil && d != "" {
			t.Fatalf("%q: op (-checked +decodeOp):\n%s", b, d)
		}
	})
}
