package agentapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
)

func TestObjectKeysIssue(t *testing.T) {
	many := `{"k0":0`
	for i := 1; i <= maxObjectKeys; i++ {
		many += `,"k` + strings.Repeat("x", i) + `":0`
	}
	many += `}`
	cases := []struct {
		json  string
		issue bool
	}{
		{`{"planID":"a","fence":1}`, false},
		{`{"planID":"a","PlanId":"b"}`, true},
		{`{"planID":"a","planID":"a"}`, true},
		{`{"a":{"b":1,"B":2}}`, true},
		{`{"a":[{"b":1},{"b":2}]}`, false}, // one key each
		{`{"a":[{"b":1,"b":2}]}`, true},
		{`{"a":{"b":1},"b":2}`, false}, // different objects
		{`{"a":"b","c":"A"}`, false},   // values are not keys
		{`{"a\"b":1,"A\"B":2}`, true},
		{`{"plan\u0049D":1,"planid":2}`, true},
		{`{"kind":1,"\u212aind":2}`, true}, // KELVIN SIGN folds to k
		{`["a","A"]`, false},
		{many, true},
		{`{"a":1,"A"`, true}, // what it scanned already repeats
		{`{"a":1,`, false},
		{`"unterminated`, false},
	}
	for _, tc := range cases {
		if got := objectKeysIssue([]byte(tc.json)); (got != "") != tc.issue {
			t.Errorf("objectKeysIssue(%s) = %q, want an issue: %v", tc.json, got, tc.issue)
		}
	}
}

// FuzzObjectKeysIssue: on valid JSON the scanner finds a repeated key (or
// an object with too many keys) exactly when encoding/json's own
// tokenizer, which decodes every key, shows one.
func FuzzObjectKeysIssue(f *testing.F) {
	for _, s := range []string{`{"planID":"a","PlanId":"b"}`, `{"a":[{"b":{"c":1}},{"B":2}]}`, `{"x\u0041":1,"xa":2}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if !json.Valid(b) {
			_ = objectKeysIssue(b) // must not panic
			return
		}
		got := objectKeysIssue(b) != ""
		want := tokenKeysIssue(t, b)
		if got != want {
			t.Fatalf("%q: scanner says %v (%q), the tokenizer %v", b, got, objectKeysIssue(b), want)
		}
	})
}

// tokenKeysIssue is objectKeysIssue on json.Decoder's tokens: slow,
// allocating, obviously right.
func tokenKeysIssue(t *testing.T, b []byte) bool {
	type frame struct {
		object, wantKey bool
		keys            []string
	}
	var stack []*frame
	valueDone := func() {
		if n := len(stack); n > 0 && stack[n-1].object {
			stack[n-1].wantKey = true
		}
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return false
		}
		if err != nil {
			t.Fatalf("%q is valid JSON but does not tokenize: %v", b, err)
		}
		if n := len(stack); n > 0 && stack[n-1].wantKey {
			if tok == json.Delim('}') {
				stack = stack[:n-1]
				valueDone()
				continue
			}
			top, key := stack[n-1], tok.(string)
			for _, k := range top.keys {
				if strings.EqualFold(k, key) {
					return true
				}
			}
			if len(top.keys) == maxObjectKeys {
				return true
			}
			top.keys, top.wantKey = append(top.keys, key), false
			continue
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &frame{object: true, wantKey: true})
		case json.Delim('['):
			stack = append(stack, &frame{})
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
			valueDone()
		default:
			valueDone()
		}
	}
}
