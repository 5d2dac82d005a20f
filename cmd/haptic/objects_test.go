package main

import (
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseObjectsAcceptsCommaSeparatedSizes(t *testing.T) {
	tests := []struct {
		in   string
		want []int
	}{
		{"100", []int{100}},
		{"100,1000,5000", []int{100, 1000, 5000}},
		{" 5000 , 10 ", []int{5000, 10}},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := parseObjects(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("parseObjects(%q) (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestParseObjectsRejectsBadLists(t *testing.T) {
	for _, in := range []string{"", " ", "0", "-1", "1,,2", "a", "1,1", "1e3", "2000000", strings.Repeat("1,", 17) + "1", "0x10"} {
		t.Run(strconv.Quote(in), func(t *testing.T) {
			if got, err := parseObjects(in); err == nil {
				t.Errorf("parseObjects(%q) = %v, want an error", in, got)
			}
		})
	}
}

func FuzzParseObjects(f *testing.F) {
	f.Add("100,1000,5000")
	f.Add(" 7 ")
	f.Add("1,,2")
	f.Fuzz(func(t *testing.T, s string) {
		got, err := parseObjects(s)
		if err != nil {
			return
		}
		if len(got) == 0 || len(got) > 16 {
			t.Fatalf("parseObjects(%q) = %v: size count out of range", s, got)
		}
		seen := map[int]bool{}
		strs := make([]string, len(got))
		for i, n := range got {
			if n < 1 || n > maxObjects || seen[n] {
				t.Fatalf("parseObjects(%q) = %v: bad size %d", s, got, n)
			}
			seen[n] = true
			strs[i] = strconv.Itoa(n)
		}
		// Round trip: the canonical form parses to the same list.
		again, err := parseObjects(strings.Join(strs, ","))
		if err != nil || !cmp.Equal(got, again) {
			t.Fatalf("round trip of %v: %v, %v", got, again, err)
		}
	})
}
