package agentapi_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/haptic-io/haptic/agentapi"
)

func TestTokenNeverPrintsItself(t *testing.T) {
	tok := agentapi.Token("s3cr3t-value-0123456789")
	var logged bytes.Buffer
	slog.New(slog.NewTextHandler(&logged, nil)).Info("config", "token", tok)
	slog.New(slog.NewJSONHandler(&logged, nil)).Info("config", "token", tok)
	enc, err := json.Marshal(struct{ Token agentapi.Token }{tok})
	if err != nil {
		t.Fatal(err)
	}
	outputs := map[string]string{
		"String": tok.String(),
		"%v":     fmt.Sprintf("%v", tok),
		"%s":     fmt.Sprintf("token=%s", tok),
		"%#v":    fmt.Sprintf("%#v", tok),
		"%+v":    fmt.Sprintf("%+v", struct{ T agentapi.Token }{tok}),
		"slog":   logged.String(),
		"json":   string(enc),
	}
	for name, out := range outputs {
		if strings.Contains(out, "s3cr3t") {
			t.Errorf("%s leaks the token: %q", name, out)
		}
		if !strings.Contains(out, "[redacted]") {
			t.Errorf("%s does not say [redacted]: %q", name, out)
		}
	}
}

func TestTokenEqual(t *testing.T) {
	a := agentapi.Token("token-aaaaaaaaaaaaaaaa")
	cases := []struct {
		x, y agentapi.Token
		want bool
	}{
		{a, a, true},
		{a, "token-aaaaaaaaaaaaaaab", false},
		{a, a + "x", false},
		{a, "", false},
		{"", "", false},
	}
	for _, tc := range cases {
		if got := tc.x.Equal(tc.y); got != tc.want {
			t.Errorf("%q.Equal(%q) = %v, want %v", string(tc.x), string(tc.y), got, tc.want)
		}
	}
}

func TestReadTokenFile(t *testing.T) {
	cases := []struct {
		name    string
		content string
		want    agentapi.Token
		wantErr string
	}{
		{name: "trailing newline is dropped", content: "abcdefghijklmnop0123\n", want: "abcdefghijklmnop0123"},
		{name: "surrounding space is dropped", content: "  abcdefghijklmnop0123 \r\n", want: "abcdefghijklmnop0123"},
		{name: "too short", content: "short\n", wantErr: "shorter than 16"},
		{name: "empty", content: "", wantErr: "shorter than 16"},
		{name: "inner space", content: "abcdefgh ijklmnop0123", wantErr: "not printable ASCII"},
		{name: "too long", content: strings.Repeat("a", 5000), wantErr: "longer than"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "token")
			if err := os.WriteFile(p, []byte(tc.content), 0o600); err != nil {
				t.Fatal(err)
			}
			got, err := agentapi.ReadTokenFile(p)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tc.wantErr)
				}
				if strings.Contains(err.Error(), tc.content) && tc.content != "" {
					t.Errorf("error %q repeats the file content", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(tc.want) {
				t.Errorf("token = %q, want %q", string(got), string(tc.want))
			}
		})
	}
	if _, err := agentapi.ReadTokenFile(filepath.Join(t.TempDir(), "missing")); !os.IsNotExist(unwrapAll(err)) {
		t.Errorf("missing file: error = %v, want not-exist", err)
	}
}

func unwrapAll(err error) error {
	for {
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return err
		}
		next := u.Unwrap()
		if next == nil {
			return err
		}
		err = next
	}
}
