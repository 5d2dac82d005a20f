package store

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"unicode/utf8"

	"go.yaml.in/yaml/v2"
)

// decodeYAMLDocument decodes one YAML document into the values
// Kubernetes' unstructured objects hold: map[string]any, []any, string,
// bool, int64, float64 and nil (an empty document). It gives what
// sigs.k8s.io/yaml's YAMLToJSON followed by a JSON decode (numbers as
// json.Number, then [Normalize]) gives, without writing and parsing
// the JSON text; FuzzDecodeManifestsMatchesJSONRoundTrip holds the two
// together. The one difference: keys that become the same string (1 and
// "1", or two invalid UTF-8 spellings of one key) are an error here,
// where the round trip keeps one of them (by map order, so at random).
func decodeYAMLDocument(doc []byte) (any, error) {
	var v any
	if err := yaml.Unmarshal(doc, &v); err != nil {
		return nil, err
	}
	return unstructuredValue(v)
}

// unstructuredValue converts a value yaml.v2 decoded into an interface.
func unstructuredValue(v any) (any, error) {
	switch x := v.(type) {
	case nil, bool:
		return x, nil
	case string:
		return validUTF8(x), nil
	case int:
		return int64(x), nil
	case int64:
		return x, nil
	case map[any]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			key, err := mapKey(k, e)
			if err != nil {
				return nil, err
			}
			if _, dup := m[key]; dup {
				return nil, fmt.Errorf("two keys of one mapping are both %q", key)
			}
			ev, err := unstructuredValue(e)
			if err != nil {
				return nil, err
			}
			m[key] = ev
		}
		return m, nil
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			ev, err := unstructuredValue(e)
			if err != nil {
				return nil, err
			}
			out[i] = ev
		}
		return out, nil
	}
	// Floats, integers beyond int64 and anything else: through JSON, as
	// the round trip would (NaN and infinities are errors there).
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var out any
	if err := dec.Decode(&out); err != nil {
		return nil, err
	}
	return Normalize(out), nil
}

// mapKey is the JSON name of a YAML mapping key, as YAMLToJSON names it.
func mapKey(k, v any) (string, error) {
	switch x := k.(type) {
	case string:
		return validUTF8(x), nil
	case int:
		return strconv.Itoa(x), nil
	case int64:
		return strconv.FormatInt(x, 10), nil
	case float64:
		// yaml.v2's own spelling of a float.
		switch s := strconv.FormatFloat(x, 'g', -1, 32); s {
		case "+Inf":
			return ".inf", nil
		case "-Inf":
			return "-.inf", nil
		case "NaN":
			return ".nan", nil
		default:
			return s, nil
		}
	case bool:
		return strconv.FormatBool(x), nil
	}
	return "", fmt.Errorf("unsupported map key of type: %s, key: %+#v, value: %+#v", reflect.TypeOf(k), k, v)
}

// validUTF8 replaces each byte of s that is not valid UTF-8 with U+FFFD,
// as encoding/json does when it writes a string.
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b []byte
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = utf8.AppendRune(b, utf8.RuneError)
		} else {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return string(b)
}
