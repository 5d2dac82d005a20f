package v1alpha1_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	v1alpha1 "github.com/haptic-io/haptic/api/v1alpha1"
)

func TestLibraryNamesDefaultsOnlyWhenUnset(t *testing.T) {
	tests := []struct {
		name      string
		libraries []string
		want      []string
	}{
		{"unset", nil, []string{"base", "ingress"}},
		{"empty means none", []string{}, []string{}},
		{"explicit", []string{"base"}, []string{"base"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := &v1alpha1.HAProxyTemplateConfigSpec{Libraries: tt.libraries}
			if diff := cmp.Diff(tt.want, spec.LibraryNames()); diff != "" {
				t.Errorf("LibraryNames() (-want +got):\n%s", diff)
			}
		})
	}
}
