package agentapi

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// maxObjectKeys bounds the keys of one JSON object of a manifest. The
// widest object the contract has is an [Op], with a score of fields; the
// bound keeps the pairwise comparison of objectKeysIssue cheap.
const maxObjectKeys = 64

// objectKeysIssue reports, for the JSON text b, the first object that
// names a key twice, or more than maxObjectKeys keys, at any depth. Keys
// are compared the way encoding/json matches them to struct fields:
// escapes decoded, without regard to case (bytes.EqualFold, Unicode
// simple folding included). encoding/json takes such a repeat silently
// and keeps the last value, even with DisallowUnknownFields, so that
// {"planID":"a","PlanId":"b"} would be plan b. Malformed JSON is not its
// to report: it says nothing of what it cannot scan, and the decoder
// that runs next names the syntax error.
func objectKeysIssue(b []byte) string {
	type object struct {
		keys [][]byte
		open bool // an object, not an array
	}
	var stack []object
	wantKey := false // the next string is a key of the innermost object
	for i := 0; i < len(b); {
		switch c := b[i]; c {
		case '{', '[':
			if len(stack) < cap(stack) {
				stack = stack[:len(stack)+1]
				stack[len(stack)-1].keys = stack[len(stack)-1].keys[:0]
			} else {
				stack = append(stack, object{})
			}
			stack[len(stack)-1].open = c == '{'
			wantKey = c == '{'
			i++
		case '}', ']':
			if len(stack) == 0 {
				return ""
			}
			stack = stack[:len(stack)-1]
			wantKey = false
			i++
		case ',':
			wantKey = len(stack) > 0 && stack[len(stack)-1].open
			i++
		case ':':
			wantKey = false
			i++
		case '"':
			end, escaped := stringEnd(b, i)
			if end < 0 {
				return ""
			}
			if wantKey && len(stack) > 0 {
				key := b[i+1 : end-1]
				if escaped {
					var s string
					if json.Unmarshal(b[i:end], &s) != nil {
						return ""
					}
					key = []byte(s)
				}
				o := &stack[len(stack)-1]
				for _, k := range o.keys {
					switch {
					case bytes.Equal(k, key):
						return fmt.Sprintf("an object has the key %q twice", key)
					case bytes.EqualFold(k, key):
						return fmt.Sprintf("an object has the keys %q and %q, which name one field (keys match without regard to case)", k, key)
					}
				}
				if len(o.keys) == maxObjectKeys {
					return fmt.Sprintf("an object has more than %d keys", maxObjectKeys)
				}
				o.keys = append(o.keys, key)
				wantKey = false
			}
			i = end
		default:
			i++
		}
	}
	return ""
}

// stringEnd returns the index just after the closing quote of the JSON
// string that opens at b[i], and whether it holds an escape; -1 when it
// does not end.
func stringEnd(b []byte, i int) (int, bool) {
	escaped := false
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			escaped = true
			j++
		case '"':
			return j + 1, escaped
		}
	}
	return -1, escaped
}
