package store_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/haptic-io/haptic/store"
)

// roundTripManifests is how DecodeManifests decoded before it converted
// yaml.v2's values itself: YAMLToJSON, then a JSON decode with numbers as
// json.Number made int64 where integral. DecodeManifests must give the
// same objects and fail on the same inputs.
func roundTripManifests(b []byte) ([]map[string]any, error) {
	var out []map[string]any
	for i, doc := range roundTripSplit(b) {
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		js, err := yaml.YAMLToJSON(doc)
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		if bytes.Equal(bytes.TrimSpace(js), []byte("null")) {
			continue
		}
		dec := json.NewDecoder(bytes.NewReader(js))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		obj, ok := roundTripNormalize(v).(map[string]any)
		if !ok {
			return nil, fmt.Errorf("document %d: not a mapping", i)
		}
		if kind, _ := obj["kind"].(string); kind == "List" || strings.HasSuffix(kind, "List") && obj["items"] != nil {
			items, ok := obj["items"].([]any)
			if !ok && obj["items"] != nil {
				return nil, fmt.Errorf("document %d: %s items is not a list", i, kind)
			}
			for j, it := range items {
				m, ok := it.(map[string]any)
				if !ok {
					return nil, fmt.Errorf("document %d: item %d: not a mapping", i, j)
				}
				out = append(out, m)
			}
			continue
		}
		out = append(out, obj)
	}
	return out, nil
}

func roundTripSplit(b []byte) [][]byte {
	var docs [][]byte
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 64*1024), len(b)+1)
	sc.Split(func(data []byte, atEOF bool) (int, []byte, error) {
		if atEOF && len(data) == 0 {
			return 0, nil, nil
		}
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			return i + 1, data[:i+1], nil
		}
		if atEOF {
			return len(data), data, nil
		}
		return 0, nil, nil
	})
	var cur bytes.Buffer
	for sc.Scan() {
		line := sc.Bytes()
		t := bytes.TrimRight(line, "\r\n")
		if bytes.Equal(t, []byte("---")) || bytes.HasPrefix(t, []byte("--- ")) {
			docs = append(docs, bytes.Clone(cur.Bytes()))
			cur.Reset()
			continue
		}
		cur.Write(line)
	}
	return append(docs, cur.Bytes())
}

func roundTripNormalize(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = roundTripNormalize(e)
		}
		return x
	case []any:
		for i, e := range x {
			x[i] = roundTripNormalize(e)
		}
		return x
	case json.Number:
		if n, err := x.Int64(); err == nil {
			return n
		}
		f, _ := x.Float64()
		return roundTripNormalize(f)
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return int64(x)
		}
		return x
	}
	return v
}

// sameAsRoundTrip fails t unless DecodeManifests and the round trip agree
// on b; it reports whether both decoded it.
func sameAsRoundTrip(t *testing.T, b []byte) bool {
	t.Helper()
	got, err := store.DecodeManifests(b)
	if err != nil && strings.Contains(err.Error(), "two keys of one mapping are both") {
		return false // the round trip keeps one of the two at random
	}
	want, werr := roundTripManifests(b)
	switch {
	case err != nil && werr != nil:
		return false
	case err != nil:
		t.Fatalf("DecodeManifests(%q) failed where the round trip did not: %v", b, err)
	case werr != nil:
		t.Fatalf("DecodeManifests(%q) decoded what the round trip refuses (%v): %#v", b, werr, got)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("DecodeManifests(%q) differs from the round trip (-round trip +got):\n%s", b, d)
	}
	return true
}

func TestDecodeManifestsMatchesTheJSONRoundTrip(t *testing.T) {
	decoded := []string{
		"a: 1\nb: -0.0\nc: 1.5\nd: 1e3\ne: 2.5e-7\nf: 1e17\ng: 1152921504606846976\nh: 1e21\ni: 0x1F\nj: 0o17\nk: 1_000\n",
		"big: 9223372036854775807\nbigger: 9223372036854775808\nhuge: 18446744073709551615\nneg: -9223372036854775808\n",
		"a: y\nb: n\nc: on\nd: off\ne: yes\nf: true\ng: ~\nh:\ni: \"null\"\n",
		"1: int key\n1.5: float key\ntrue: bool key\n2.0: float two\n",
		"when: 2001-12-14t21:59:43.10-05:00\nday: 2002-12-14\nbin: !!binary aGVsbG8=\n",
		"base: &b {x: 1, y: [1, 2]}\nmerged: {<<: *b, z: 3}\n",
		"s: \"\\xff\\xfe ok \\u00e9\"\nk: {\"\\xc3\": 1}\n",
		"raw: !!binary //5vaw==\nlist: [!!binary gA==]\n? !!binary 4pyTwyg=\n: key of invalid UTF-8\n",
		"items: [{a: 1}]\nkind: PodList\n---\nkind: List\nitems: []\n---\n# comment only\n---\n",
		`{"kind": "List", "items": [{"a": 1e3, "b": 1.5, "c": [true, null]}]}`,
		"a:\n  - [1, [2, {b: c}]]\n  - {d: [e, 3.25]}\n",
	}
	for _, in := range decoded {
		if !sameAsRoundTrip(t, []byte(in)) {
			t.Errorf("%q: neither decoded it; the case checks values", in)
		}
	}
	refused := []string{
		"a: .nan\n",
		"a: [.inf]\n",
		"? [1, 2]\n: x\n",
		"~: null key\n",
		"- a list\n",
		"just a scalar\n",
		"a: b: c\n",
		"kind: List\nitems: {a: 1}\n",
		"kind: List\nitems: [1]\n",
	}
	for _, in := range refused {
		if sameAsRoundTrip(t, []byte(in)) {
			t.Errorf("%q: both decoded it; the case checks refusals", in)
		}
	}
}

func TestDecodeManifestsRefusesKeysThatCollide(t *testing.T) {
	for _, in := range []string{"1: int\n\"1\": string\n", "true: a\n\"true\": b\n"} {
		_, err := store.DecodeManifests([]byte(in))
		if err == nil || !strings.Contains(err.Error(), `two keys of one mapping are both "`) {
			t.Errorf("DecodeManifests(%q) = %v, want the collision named", in, err)
		}
	}
}

// FuzzDecodeManifestsMatchesJSONRoundTrip: DecodeManifests gives what the
// YAML → JSON → values round trip gives, and fails where it fails.
func FuzzDecodeManifestsMatchesJSONRoundTrip(f *testing.F) {
	f.Add([]byte("apiVersion: v1\nkind: Service\nmetadata: {name: a, labels: {x: \"1\"}}\nspec: {ports: [{port: 80}]}\n"))
	f.Add([]byte("a: 1.0\nb: [1e400, -1e-400]\nc: !!float 3\nd: !!str 4\n"))
	f.Add([]byte("1: a\n2.5: b\nfalse: c\n---\nkind: List\nitems: [{k: v}]\n"))
	f.Add([]byte("x: &a [1, *a]\n"))
	f.Add([]byte("s: \"\\xff\\xfe\"\n"))
	f.Add([]byte("b: !!binary //5vaw==\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		sameAsRoundTrip(t, b)
	})
}
