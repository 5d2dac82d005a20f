package agent_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/haptic-io/haptic/internal/agent"
)

// A journal is written in place and acted on only once it is durable, so
// one a crash cut short belongs to an apply that never renamed anything
// into the tree: recovery discards it and its staging, and leaves the
// tree alone.
func TestRecoveryDiscardsAJournalACrashCutShortBeforeTheSwap(t *testing.T) {
	for name, journal := range map[string]string{
		"empty":  "",
		"torn":   `{"txn":"1-1","planID":"b","entries":[{"path":"haproxy.cfg","ol`,
		"zeroed": "\x00\x00\x00\x00\x00\x00\x00\x00",
	} {
		t.Run(name, func(t *testing.T) {
			base := t.TempDir()
			state := filepath.Join(base, "state")
			write := func(p, body string) {
				t.Helper()
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			write(filepath.Join(base, "haproxy.cfg"), "old config\n")
			write(filepath.Join(base, ".haptic-txn", "1-1.n0"), "new config\n")
			write(filepath.Join(state, "journal.json"), journal)
			a, err := agent.New(agent.Config{BaseDir: base, StateDir: state, MasterSocket: filepath.Join(base, "m.sock"),
				StatsSocket: filepath.Join(base, "s.sock"), DriftInterval: -1, MinReloadInterval: -1, Log: testLogger(t)})
			if err != nil {
				t.Fatalf("New with a %s journal: %v", name, err)
			}
			defer a.Close()
			if _, err := os.Stat(filepath.Join(state, "journal.json")); !os.IsNotExist(err) {
				t.Errorf("the journal is still there (stat: %v)", err)
			}
			if _, err := os.Stat(filepath.Join(base, ".haptic-txn")); !os.IsNotExist(err) {
				t.Errorf("the staging is still there (stat: %v)", err)
			}
			if b, _ := os.ReadFile(filepath.Join(base, "haproxy.cfg")); string(b) != "old config\n" {
				t.Errorf("haproxy.cfg = %q, want the old config untouched", b)
			}
		})
	}
}
