package agentapi_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/haptic-io/haptic/agentapi"
)

// FuzzDecodeManifest checks the manifest decoder, which reads what the
// network sends: it never panics; every refusal is a decode-stage
// *NackError; an accepted manifest has only clean, unique paths, each
// where its file kind lives, valid ops and known modes and verdicts, and
// survives an encode/decode round trip unchanged (a manifest naming a key
// twice, which would not, is refused).
func FuzzDecodeManifest(f *testing.F) {
	b, err := json.Marshal(validRequest())
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	l := agentapi.Limits{MaxFiles: 64, MaxOps: 64}
	f.Fuzz(func(t *testing.T, b []byte) {
		req, err := agentapi.DecodeManifest(b, l)
		if err != nil {
			var nack *agentapi.NackError
			if !errors.As(err, &nack) || nack.Stage != agentapi.StageDecode {
				t.Fatalf("refusal %v (%T) is not a decode nack", err, err)
			}
			if req != nil {
				t.Fatalf("refusal returned a request too")
			}
			return
		}
		seen := map[string]bool{}
		for _, f := range req.Files {
			if err := agentapi.ValidatePath(f.Path); err != nil {
				t.Fatalf("accepted a bad path: %v", err)
			}
			if err := agentapi.ValidatePlace(f.Path, f.Kind); err != nil {
				t.Fatalf("accepted a misplaced file: %v", err)
			}
			if seen[f.Path] {
				t.Fatalf("accepted %q twice", f.Path)
			}
			seen[f.Path] = true
		}
		for i, o := range req.Ops {
			if err := o.Validate(); err != nil {
				t.Fatalf("accepted op %d that does not validate: %v", i, err)
			}
		}
		switch req.Mode {
		case "", agentapi.ModeAuto, agentapi.ModeReload, agentapi.ModeRevertLKG:
		default:
			t.Fatalf("accepted mode %q", req.Mode)
		}
		switch req.Verdict {
		case "", agentapi.VerdictNoop, agentapi.VerdictFileOnly, agentapi.VerdictRuntime, agentapi.VerdictReload:
		default:
			t.Fatalf("accepted verdict %q", req.Verdict)
		}
		if err := req.Validate(l); err != nil {
			t.Fatalf("accepted manifest fails Validate: %v", err)
		}
		enc, err := json.Marshal(req)
		if err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		back, err := agentapi.DecodeManifest(enc, l)
		if err != nil {
			t.Fatalf("decode of re-encoded %s: %v", enc, err)
		}
		if diff := cmp.Diff(req, back, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("round trip (-want +got):\n%s", diff)
		}
	})
}
