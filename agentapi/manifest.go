package agentapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/haptic-io/haptic/renderplan"
)

// wireManifest mirrors the JSON of [ApplyRequest], with the ops left raw
// so that each is checked for version skew before it is decoded.
type wireManifest struct {
	PlanID         string            `json:"planID"`
	ExpectedPlanID string            `json:"expectedPlanID"`
	Fence          uint64            `json:"fence"`
	Mode           Mode              `json:"mode"`
	Verdict        Verdict           `json:"verdict"`
	Files          []renderplan.File `json:"files"`
	Ops            []json.RawMessage `json:"ops"`
}

// opJSONFields returns the JSON names of the fields of [Op].
var opJSONFields = sync.OnceValue(func() map[string]bool {
	t := reflect.TypeFor[Op]()
	m := make(map[string]bool, t.NumField())
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		m[name] = true
	}
	return m
})

// DecodeManifest decodes the manifest of an apply request (the JSON form
// of [ApplyRequest], without bodies) strictly and checks it against l
// (zero fields mean the defaults). Every error is a *[NackError] at
// [StageDecode]: an unknown field (in the manifest, a file or an op), an
// unknown op kind, mode, verdict or file kind is Unsupported (version
// skew); anything else malformed is not, a key an object names twice
// included (keys compared without regard to case, as encoding/json
// matches them, so that "planID" and "PlanId" cannot both be sent and the
// last win). An accepted manifest has only paths that pass [ValidatePath],
// each file where its kind lives ([ValidatePlace]), no path twice, and ops
// that pass [Op.Validate].
func DecodeManifest(b []byte, l Limits) (*ApplyRequest, error) {
	req, nack := decodeManifest(b, l.WithDefaults())
	if nack != nil {
		return nil, nack
	}
	return req, nil
}

// decodeManifest is DecodeManifest with l's defaults applied and a typed
// error.
func decodeManifest(b []byte, l Limits) (*ApplyRequest, *NackError) {
	if int64(len(b)) > l.MaxManifestBytes {
		return nil, decodeNack(-1, "manifest is larger than %d bytes", l.MaxManifestBytes)
	}
	if issue := objectKeysIssue(b); issue != "" {
		return nil, decodeNack(-1, "manifest: %s", issue)
	}
	var w wireManifest
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&w); err != nil {
		if name, ok := unknownField(err); ok {
			return nil, unsupportedNack(-1, "manifest: unknown field %s", name)
		}
		return nil, decodeNack(-1, "manifest: %v", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, decodeNack(-1, "manifest: trailing data after the JSON object")
	}
	// Check the counts before decoding ops one by one.
	if len(w.Files) > l.MaxFiles {
		return nil, decodeNack(-1, "manifest lists %d files, more than %d", len(w.Files), l.MaxFiles)
	}
	if len(w.Ops) > l.MaxOps {
		return nil, decodeNack(-1, "manifest has %d ops, more than %d", len(w.Ops), l.MaxOps)
	}
	req := &ApplyRequest{
		PlanID:         w.PlanID,
		ExpectedPlanID: w.ExpectedPlanID,
		Fence:          w.Fence,
		Mode:           w.Mode,
		Verdict:        w.Verdict,
		Files:          w.Files,
	}
	if len(w.Ops) > 0 {
		req.Ops = make([]Op, len(w.Ops))
	}
	for i, raw := range w.Ops {
		if err := decodeOp(raw, &req.Ops[i]); err != nil {
			err.Op = i
			return nil, err
		}
	}
	if err := req.validateManifest(); err != nil {
		return nil, err
	}
	return req, nil
}

// decodeOp decodes one op, telling version skew (an unknown field or
// kind) from a malformed op. The returned error's Op is set by the caller.
func decodeOp(raw json.RawMessage, o *Op) *NackError {
	if decodeCanonicalOp(raw, o) {
		return nil
	}
	return decodeOpChecked(raw, o)
}

// decodeOpChecked is decodeOp for any input.
func decodeOpChecked(raw json.RawMessage, o *Op) *NackError {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return decodeNack(-1, "not a JSON object: %v", err)
	}
	if fields == nil {
		return decodeNack(-1, "null")
	}
	known := opJSONFields()
	for _, name := range slices.Sorted(maps.Keys(fields)) { // the same answer every time
		if !known[name] {
			return unsupportedNack(-1, "unknown field %q", name)
		}
	}
	kindRaw, ok := fields["kind"]
	if !ok {
		return decodeNack(-1, "no kind")
	}
	var kind string
	if err := json.Unmarshal(kindRaw, &kind); err != nil {
		return decodeNack(-1, "kind is not a string")
	}
	if _, err := ParseOpKind(kind); err != nil {
		return unsupportedNack(-1, "%v", err)
	}
	if err := o.UnmarshalJSON(raw); err != nil {
		return decodeNack(-1, "%v", err)
	}
	return nil
}

// decodeCanonicalOp decodes raw into o when raw is a valid op exactly as
// json.Marshal writes it, which is how [Client] sends ops: such an op
// passes every check of decodeOp, so one strict decode and a comparison
// replace its three parses. Anything else reports false and takes the
// checks of decodeOpChecked, which tell version skew from a malformed op.
func decodeCanonicalOp(raw json.RawMessage, o *Op) bool {
	var v Op
	if v.UnmarshalJSON(raw) != nil {
		return false
	}
	// The decode matches field names without regard to case, the checks
	// do not: only the canonical spelling is taken here.
	if b, err := json.Marshal(v); err != nil || !bytes.Equal(b, raw) {
		return false
	}
	*o = v
	return true
}

// unknownField reports whether err is encoding/json's unknown-field error
// and returns the quoted field name.
func unknownField(err error) (string, bool) {
	const prefix = "json: unknown field "
	msg := err.Error()
	if !strings.HasPrefix(msg, prefix) {
		return "", false
	}
	return strings.TrimPrefix(msg, prefix), true
}
