package agentapi_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/haptic-io/haptic/agentapi"
)

func TestValidatePath(t *testing.T) {
	cases := []struct {
		path string
		ok   bool
	}{
		{"haproxy.cfg", true},
		{"maps/hosts.map", true},
		{"certs/ünï.pem", true},
		{"a..b/c", true},
		{"..a", true},
		{"", false},
		{".", false},
		{"..", false},
		{"../x", false},
		{"a/../b", false},
		{"a/..", false},
		{"/etc/passwd", false},
		{"a//b", false},
		{"a/./b", false},
		{"a/", false},
		{"./a", false},
		{`a\b`, false},
		{`..\..\x`, false},
		{"a\x00b", false},
		{"a\nb", false},
		{"a\x7fb", false},
		{"\xff", false},
		{strings.Repeat("a", agentapi.MaxPathLen), true},
		{strings.Repeat("a", agentapi.MaxPathLen+1), false},
	}
	for _, tc := range cases {
		err := agentapi.ValidatePath(tc.path)
		if (err == nil) != tc.ok {
			t.Errorf("ValidatePath(%q) = %v, want ok=%v", tc.path, err, tc.ok)
		}
		if err != nil && !errors.Is(err, agentapi.ErrInvalidPath) {
			t.Errorf("ValidatePath(%q) = %v, does not wrap ErrInvalidPath", tc.path, err)
		}
	}
}
