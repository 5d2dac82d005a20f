package templating_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/haptic-io/haptic/renderplan"
	"github.com/haptic-io/haptic/templating"
)

// TestSanitizeNameReplacesOnlyIllegalBytes checks that SanitizeName keeps
// legal names as they are, replaces each illegal byte with '_', and always
// returns a name renderplan accepts.
func TestSanitizeNameReplacesOnlyIllegalBytes(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"legal name is kept", "be_App-1.svc:80", "be_App-1.svc:80"},
		{"empty becomes underscore", "", "_"},
		{"space and slash become underscores", "a b/c", "a_b_c"},
		{"each byte of a multi-byte rune is replaced", "bé", "b__"},
		{"control characters are replaced", "a\x00\n", "a__"},
		{"quotes and hash are replaced", `"a'#`, "_a__"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := templating.SanitizeName(tt.in)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("SanitizeName(%q) (-want +got):\n%s", tt.in, diff)
			}
			if err := renderplan.CheckName(got); err != nil {
				t.Errorf("CheckName(SanitizeName(%q)) = %v, want nil", tt.in, err)
			}
		})
	}
}
