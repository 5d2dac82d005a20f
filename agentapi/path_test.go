package agentapi_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/haptic-io/haptic/agentapi"
	"github.com/haptic-io/haptic/renderplan"
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

func TestValidatePlaceKeepsEachKindInItsDirectory(t *testing.T) {
	cases := []struct {
		path string
		kind renderplan.FileKind
		ok   bool
	}{
		{"haproxy.cfg", renderplan.FileConfig, true},
		{"maps/hosts.map", renderplan.FileMap, true},
		{"maps/sub/paths.map", renderplan.FileMap, true},
		{"certs/site.pem", renderplan.FileCert, true},
		{"certs/list.txt", renderplan.FileCrtList, true},
		{"general/503.http", renderplan.FileGeneral, true},
		{"haproxy.cfg", renderplan.FileMap, false},
		{"haproxy.cfg", renderplan.FileGeneral, false},
		{"maps/haproxy.cfg", renderplan.FileConfig, false},
		{"general/site.pem", renderplan.FileCert, false},
		{"maps/list.txt", renderplan.FileCrtList, false},
		{"certs/hosts.map", renderplan.FileMap, false},
		{"maps/x", renderplan.FileGeneral, false},
		{"mapsx/hosts.map", renderplan.FileMap, false},
		{"general/lua.lua", renderplan.FileKind("lua"), true}, // unknown kinds are DecodeManifest's to refuse
	}
	for _, tc := range cases {
		err := agentapi.ValidatePlace(tc.path, tc.kind)
		if (err == nil) != tc.ok {
			t.Errorf("ValidatePlace(%q, %s) = %v, want ok=%v", tc.path, tc.kind, err, tc.ok)
		}
		if err != nil && !errors.Is(err, agentapi.ErrMisplacedFile) {
			t.Errorf("ValidatePlace(%q, %s) = %v, does not wrap ErrMisplacedFile", tc.path, tc.kind, err)
		}
	}
}
