package runtimeop

import (
	"encoding/json"
	"errors"
	"testing"
)

func TestOpKindPhasesNeverDecreaseAlongTheKindOrder(t *testing.T) {
	kinds := OpKinds()
	if len(kinds) != int(opEnd)-1 {
		t.Fatalf("OpKinds() has %d kinds, want %d", len(kinds), int(opEnd)-1)
	}
	for i := 1; i < len(kinds); i++ {
		if kinds[i-1] >= kinds[i] {
			t.Errorf("kinds out of order: %v before %v", kinds[i-1], kinds[i])
		}
		if kinds[i-1].Phase() > kinds[i].Phase() {
			t.Errorf("phase decreases from %v (%d) to %v (%d)", kinds[i-1], kinds[i-1].Phase(), kinds[i], kinds[i].Phase())
		}
	}
}

func TestOpKindSafeOrderMatchesTheDesign(t *testing.T) {
	// add backend → add/update servers → publish → map upserts → certs →
	// map deletes → unpublish → server deletes → backend deletes.
	want := []OpKind{OpAddBackend, OpAddServer, OpPublishBackend, OpSetMapEntry, OpSetCert, OpDelMapEntry, OpUnpublishBackend, OpDelServer, OpDelBackend}
	for i := 1; i < len(want); i++ {
		if want[i-1].Phase() >= want[i].Phase() {
			t.Errorf("%v (phase %d) must run in an earlier phase than %v (phase %d)", want[i-1], want[i-1].Phase(), want[i], want[i].Phase())
		}
	}
}

func TestOpKindNamesRoundTripAndAreUnique(t *testing.T) {
	seen := map[string]OpKind{}
	for _, k := range OpKinds() {
		name := k.String()
		if prev, dup := seen[name]; dup {
			t.Fatalf("%v and %v share the name %q", prev, k, name)
		}
		seen[name] = k
		got, err := ParseOpKind(name)
		if err != nil || got != k {
			t.Errorf("ParseOpKind(%q) = %v, %v; want %v", name, got, err, k)
		}
		b, err := json.Marshal(k)
		if err != nil {
			t.Fatalf("marshal %v: %v", k, err)
		}
		var back OpKind
		if err := json.Unmarshal(b, &back); err != nil || back != k {
			t.Errorf("round trip of %s = %v, %v", b, back, err)
		}
	}
}

func TestOpKindUnknownNameIsAnError(t *testing.T) {
	var k OpKind
	err := json.Unmarshal([]byte(`"server.teleport"`), &k)
	if !errors.Is(err, ErrUnknownOpKind) {
		t.Fatalf("err = %v, want ErrUnknownOpKind", err)
	}
	if _, err := json.Marshal(OpKind(0)); err == nil {
		t.Fatal("marshalling the zero kind succeeded")
	}
	if got := OpKind(99).String(); got != "OpKind(99)" {
		t.Errorf("String of an unknown kind = %q", got)
	}
}
