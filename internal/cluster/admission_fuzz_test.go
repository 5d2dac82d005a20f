package cluster

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
)

// FuzzDecodeReview: whatever the body, decoding never panics and reads at
// most the limit; a review it accepts has a uid, a known operation and an
// object when the operation needs one; its objects are JSON-shaped
// (integers int64, other numbers float64) with no key twice; and the
// answer to it names the same uid.
func FuzzDecodeReview(f *testing.F) {
	f.Add([]byte(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"x","operation":"CREATE","object":{"metadata":{"name":"n"}}}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		rv, err := decodeReview(bytes.NewReader(body), 1<<20)
		if err != nil {
			return
		}
		req := rv.req
		if req.UID == "" {
			t.Fatal("accepted a review without uid")
		}
		switch req.Operation {
		case admissionv1.Create, admissionv1.Update:
			if rv.object == nil {
				t.Fatalf("accepted %s without an object", req.Operation)
			}
		case admissionv1.Delete, admissionv1.Connect:
		default:
			t.Fatalf("accepted operation %q", req.Operation)
		}
		for _, raw := range [][]byte{req.Object.Raw, req.OldObject.Raw} {
			if k := duplicateKey(raw); k != "" {
				t.Fatalf("accepted an object with key %q twice: %s", k, raw)
			}
		}
		checkShape(t, rv.object)
		checkShape(t, rv.oldObject)
		out, err := encodeReview(string(req.UID), verdict{allowed: true, message: strings.Repeat("m", 5000), warnings: make([]string, 20)})
		if err != nil {
			t.Fatal(err)
		}
		var back admissionv1.AdmissionReview
		if err := json.Unmarshal(out, &back); err != nil {
			t.Fatal(err)
		}
		if back.Response == nil || back.Response.UID != req.UID {
			t.Fatalf("answer names uid %q, want %q", back.Response.UID, req.UID)
		}
		if len(back.Response.Result.Message) > maxMessageBytes || len(back.Response.Warnings) > maxWarnings+1 {
			t.Fatalf("answer not bounded: %d bytes, %d warnings", len(back.Response.Result.Message), len(back.Response.Warnings))
		}
	})
}

// checkShape fails unless v is JSON-shaped as the store wants it.
func checkShape(t *testing.T, v any) {
	t.Helper()
	switch x := v.(type) {
	case nil, bool, string, int64, float64:
	case map[string]any:
		for _, e := range x {
			checkShape(t, e)
		}
	case []any:
		for _, e := range x {
			checkShape(t, e)
		}
	default:
		t.Fatalf("value of type %T", v)
	}
}

// duplicateKey returns a key that some object of the JSON text b holds
// twice, or "".
func duplicateKey(b []byte) string {
	if len(bytes.TrimSpace(b)) == 0 {
		return ""
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	type frame struct {
		keys  map[string]bool
		isObj bool
		next  bool // the next string token is a key
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err != nil {
			return ""
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if top != nil && top.isObj && top.next {
			if k, ok := tok.(string); ok {
				if top.keys[k] {
					return k
				}
				top.keys[k] = true
				top.next = false
				continue
			}
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &frame{keys: map[string]bool{}, isObj: true, next: true})
			continue
		case json.Delim('['):
			stack = append(stack, &frame{})
			continue
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
		}
		// A value ended: in an object, a key comes next.
		if len(stack) > 0 && stack[len(stack)-1].isObj {
			stack[len(stack)-1].next = true
		}
	}
}
