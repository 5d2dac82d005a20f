package agentcmd

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestMainTakesTheAgentFlagsAtTheRoot(t *testing.T) {
	var out, errOut bytes.Buffer
	code := Main([]string{"haptic-agent", "--base-dir", t.TempDir(), "--master-socket", "/m", "--stats-socket", "/s"}, &out, &errOut)
	if code != 2 || !strings.Contains(errOut.String(), "haptic-agent: --token-file is required") {
		t.Fatalf("exit %d, stderr %q; want exit 2 asking for --token-file", code, errOut.String())
	}
}

func TestMainRunsTheBootstrapSubcommand(t *testing.T) {
	base := t.TempDir()
	var out, errOut bytes.Buffer
	if code := Main([]string{"haptic-agent", "bootstrap", "--base-dir", base, "--stats-socket", "stats.sock"}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	cfg, err := os.ReadFile(filepath.Join(base, "haproxy.cfg"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(cfg), "stats.sock") {
		t.Errorf("bootstrap config names no stats socket:\n%s", cfg)
	}
}
