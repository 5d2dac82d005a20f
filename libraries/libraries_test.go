package libraries_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/haptic-io/haptic/libraries"
)

func TestNamesListsTheEmbeddedLibraries(t *testing.T) {
	if diff := cmp.Diff([]string{"base", "gateway", "ingress"}, libraries.Names()); diff != "" {
		t.Errorf("Names() (-want +got):\n%s", diff)
	}
}

func TestLoadParsesEveryLibraryInOrder(t *testing.T) {
	cfgs, err := libraries.Load("ingress", "base")
	if err != nil {
		t.Fatal(err)
	}
	if len(cfgs) != 2 || cfgs[0].WatchedResources["ingresses"].Resource != "ingresses" || cfgs[1].HAProxyConfig == nil {
		t.Errorf("Load(ingress, base) returned the libraries out of order or incomplete")
	}
	if _, err := libraries.Load("base", "nope"); err == nil || !strings.Contains(err.Error(), `"nope": unknown`) {
		t.Errorf("Load(nope) error = %v", err)
	}
}

func TestParseListAcceptsNamesAndNone(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"base,ingress", []string{"base", "ingress"}},
		{" ingress , base ", []string{"ingress", "base"}},
		{"base", []string{"base"}},
		{"none", nil},
		{"", nil},
	}
	for _, tt := range tests {
		got, err := libraries.ParseList(tt.in)
		if err != nil {
			t.Errorf("ParseList(%q): %v", tt.in, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("ParseList(%q) (-want +got):\n%s", tt.in, diff)
		}
	}
}

func TestParseListRejectsUnknownRepeatedAndMixedNone(t *testing.T) {
	for _, in := range []string{"nope", "base,base", "base,none", "base,,ingress", "Base"} {
		if got, err := libraries.ParseList(in); err == nil {
			t.Errorf("ParseList(%q) = %v, want an error", in, got)
		}
	}
}

func FuzzParseList(f *testing.F) {
	f.Add("base,ingress")
	f.Add("none")
	f.Add(" base ,")
	f.Fuzz(func(t *testing.T, s string) {
		got, err := libraries.ParseList(s)
		if err != nil {
			return
		}
		seen := map[string]bool{}
		for _, n := range got {
			if !slices.Contains(libraries.Names(), n) || seen[n] {
				t.Fatalf("ParseList(%q) = %v: unknown or repeated %q", s, got, n)
			}
			seen[n] = true
		}
		again, err := libraries.ParseList(strings.Join(got, ","))
		if err != nil || !slices.Equal(got, again) {
			t.Fatalf("round trip of %v: %v, %v", got, again, err)
		}
	})
}
