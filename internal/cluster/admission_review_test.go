package cluster

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// seedBody returns the body of a committed fuzz seed.
func seedBody(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "fuzz", "FuzzDecodeReview", name))
	if err != nil {
		t.Fatal(err)
	}
	_, lit, _ := strings.Cut(string(b), "[]byte(")
	lit, _, _ = strings.Cut(lit, ") //")
	s, err := strconv.Unquote(lit)
	if err != nil {
		t.Fatalf("seed %s: %v", name, err)
	}
	return []byte(s)
}

func TestDecodeReviewOfTheSeeds(t *testing.T) {
	for name, wantErr := range map[string]string{
		"create-ingress":       "",
		"delete":               "",
		"unknown-fields":       "",
		"numbers":              "",
		"duplicate-uid":        `duplicate field "request.uid"`,
		"duplicate-in-object":  `object: duplicate field "spec.rules[0].host"`,
		"case-variant-key":     "without uid",
		"object-not-an-object": "object",
	} {
		t.Run(name, func(t *testing.T) {
			rv, err := decodeReview(bytes.NewReader(seedBody(t, name)), MaxReviewBytes)
			if wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), wantErr) {
				t.Fatalf("err = %v, want one saying %q (decoded %+v)", err, wantErr, rv)
			}
		})
	}
	rv, err := decodeReview(bytes.NewReader(seedBody(t, "numbers")), MaxReviewBytes)
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]any{"a": int64(1), "b": 1.5, "c": int64(-9223372036854775808), "d": 9223372036854775808.0, "e": 1e308} {
		if got := rv.object[k]; got != want {
			t.Errorf("%s = %#v, want %#v", k, got, want)
		}
	}
}

func TestDecodeReviewReadsAtMostTheLimit(t *testing.T) {
	body := seedBody(t, "create-ingress")
	if _, err := decodeReview(bytes.NewReader(body), int64(len(body))); err != nil {
		t.Errorf("at the limit: %v", err)
	}
	if _, err := decodeReview(bytes.NewReader(body), int64(len(body)-1)); err == nil || !strings.Contains(err.Error(), "larger than the limit") {
		t.Errorf("one byte over: err = %v", err)
	}
}
