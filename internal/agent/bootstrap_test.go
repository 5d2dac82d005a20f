package agent_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/haptic-io/haptic/internal/agent"
)

func TestWriteBootstrapWritesOnlyWhenTheTreeHasNoConfig(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tree")
	written, err := agent.WriteBootstrap(dir, "/run/haptic/stats.sock", []string{"0.0.0.0:80"})
	if err != nil || !written {
		t.Fatalf("first write = %v, %v; want written", written, err)
	}
	cfg := filepath.Join(dir, "haproxy.cfg")
	got, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if want := agent.BootstrapConfig("/run/haptic/stats.sock", []string{"0.0.0.0:80"}); string(got) != string(want) {
		t.Fatalf("haproxy.cfg =\n%s\nwant\n%s", got, want)
	}
	// A committed config stays as it is.
	if err := os.WriteFile(cfg, []byte("committed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	written, err = agent.WriteBootstrap(dir, "stats.sock", []string{":8080"})
	if err != nil || written {
		t.Fatalf("second write = %v, %v; want left alone", written, err)
	}
	if b, _ := os.ReadFile(cfg); string(b) != "committed\n" {
		t.Fatalf("haproxy.cfg = %q after a second bootstrap, want it untouched", b)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("tree holds %d entries, want haproxy.cfg alone (no temp file left)", len(entries))
	}
}

func TestBootstrapConfigWritesARelativeStatsSocketAsUnix(t *testing.T) {
	for sock, want := range map[string]string{
		"stats.sock":             "stats socket unix@stats.sock mode 600",
		"run/stats.sock":         "stats socket unix@run/stats.sock mode 600",
		"/run/haptic/stats.sock": "stats socket /run/haptic/stats.sock mode 600",
		"unix@/x/stats.sock":     "stats socket unix@/x/stats.sock mode 600",
	} {
		if got := string(agent.BootstrapConfig(sock, nil)); !strings.Contains(got, want) {
			t.Errorf("BootstrapConfig(%q) lacks %q:\n%s", sock, want, got)
		}
	}
}

func TestWriteBootstrapRefusesValuesThatAddDirectives(t *testing.T) {
	for name, tc := range map[string]struct {
		sock  string
		binds []string
	}{
		"no socket":           {"", nil},
		"space in the socket": {"x.sock level admin", nil},
		"newline in a bind":   {"stats.sock", []string{":80\n    daemon"}},
		"empty bind":          {"stats.sock", []string{" "}},
	} {
		dir := t.TempDir()
		if _, err := agent.WriteBootstrap(dir, tc.sock, tc.binds); err == nil {
			t.Errorf("%s: WriteBootstrap accepted it", name)
		}
		if _, err := os.Stat(filepath.Join(dir, "haproxy.cfg")); err == nil {
			t.Errorf("%s: haproxy.cfg written", name)
		}
	}
}
