package renderplan

import (
	"encoding/json"
	"testing"
)

// appendString skips safe bytes a word at a time; every byte value at
// every place of a word, and across the overlapping last word, must
// still be written exactly as encoding/json writes it.
func TestAppendStringWritesWhatEncodingJSONWrites(t *testing.T) {
	var inputs []string
	for _, base := range []string{"abcdefgh", "abcdefghijklmno", "abcdefghijklmnopq", "ab"} {
		for pos := range len(base) {
			for c := range 256 {
				b := []byte(base)
				b[pos] = byte(c)
				inputs = append(inputs, string(b))
			}
		}
	}
	inputs = append(inputs, "", "é", "aaaaaaa\u2028", "aaaaaaaa\u2029bbbbbbbb", "\xe2\x80", "0123456789abcdef<",
		"be_ns0001_svc0001_http", "10.0.0.1", "2001:db8::1", `http-request return string "<b>&amp;</b>"`)
	for _, s := range inputs {
		checkAppendString(t, s)
	}
}

// FuzzAppendString: appendString writes what encoding/json writes.
func FuzzAppendString(f *testing.F) {
	f.Add("be_app")
	f.Add("<&>\"\\\b\f\n\r\t\x01\x7f\xff é \u2028\u2029 ☃")
	f.Fuzz(func(t *testing.T, s string) {
		checkAppendString(t, s)
	})
}

func checkAppendString(t *testing.T, s string) {
	t.Helper()
	want, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	if got := appendString([]byte("x"), s); string(got) != "x"+string(want) {
		t.Fatalf("appendString(%q) = %s, encoding/json writes %s", s, got[1:], want)
	}
}
