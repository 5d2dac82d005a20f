package renderplan_test

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"testing"

	"github.com/haptic-io/haptic/renderplan"
)

// The encoder skips escaping checks a word at a time; on large plans with
// strings of every length and awkward bytes at random places it must still
// write what encoding/json writes.
func TestEncodeMatchesEncodingJSONOnVariedPlans(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	awkward := []string{"<", ">", "&", `"`, `\`, "\x00", "\x1f", "\x7f", "\xff", "é", "\u2028", "\u2029", " ", "\t"}
	for round := range 20 {
		p := bigOutput(t, 200).Plan.Clone()
		mangle := func(s *string) {
			if r.IntN(4) != 0 {
				return
			}
			b := []byte(*s)
			i := r.IntN(len(b) + 1)
			*s = string(b[:i]) + awkward[r.IntN(len(awkward))] + string(b[i:])
		}
		for i := range p.Backends {
			be := &p.Backends[i]
			mangle(&be.Name)
			mangle(&be.GUID)
			for j := range be.Servers {
				mangle(&be.Servers[j].Name)
				mangle(&be.Servers[j].Address)
			}
		}
		for i := range p.Maps[0].Entries {
			mangle(&p.Maps[0].Entries[i].Key)
			mangle(&p.Maps[0].Entries[i].Value)
		}
		got, err := p.Encode()
		if err != nil {
			t.Fatal(err)
		}
		want, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("round %d: Encode differs from json.Marshal", round)
		}
		if p.ID() != string(renderplan.DigestOf(want)) {
			t.Fatalf("round %d: ID is not the digest of the encoding", round)
		}
	}
}
