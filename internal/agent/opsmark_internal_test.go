package agent

import (
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
)

// An ops mark is left only by an apply that ran runtime ops and had not
// committed: recovery owes a reload for it unless the committed state
// names the mark's plan, and for a mark that is not what the agent
// writes (a torn one, after a power loss). A blank mark was cleared, or
// created and never written: no op started. Either way the mark is gone
// afterwards.
func TestRecoveryOwesAReloadForAnOpsMarkTheStateDoesNotName(t *testing.T) {
	for name, tc := range map[string]struct {
		mark string // "-": no mark
		owed bool
	}{
		"no mark":   {"-", false},
		"committed": {`{"planID":"p1","prevPlanID":"p0"}`, false},
		"pending":   {`{"planID":"p2","prevPlanID":"p1"}`, true},
		"empty":     {"", false},
		"cleared":   {"                                  ", false},
		"torn":      {`{"planID":"p`, true},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			if tc.mark != "-" {
				if err := os.WriteFile(filepath.Join(dir, opsMarkFile), []byte(tc.mark), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			a := markAgent(t, dir, "p1")
			owed, err := a.recoverOpsMark()
			if err != nil {
				t.Fatalf("recoverOpsMark: %v", err)
			}
			if owed != tc.owed {
				t.Errorf("reload owed = %v, want %v", owed, tc.owed)
			}
			if _, err := os.Stat(filepath.Join(dir, opsMarkFile)); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("the mark is still there (stat: %v)", err)
			}
		})
	}
}

func TestOpsMarkRoundTripsAndClears(t *testing.T) {
	dir := t.TempDir()
	a := markAgent(t, dir, "p1")
	t.Cleanup(func() { _ = a.mark.close() })
	read := func() opsMark {
		t.Helper()
		var m opsMark
		if found, err := readJSON(a.state, opsMarkFile, &m); !found || err != nil {
			t.Fatalf("read the mark: found %v, err %v", found, err)
		}
		return m
	}
	if err := a.markOps("a-long-plan-id"); err != nil {
		t.Fatal(err)
	}
	if m := read(); m != (opsMark{PlanID: "a-long-plan-id", PrevPlanID: "p1"}) {
		t.Fatalf("mark = %+v, want a-long-plan-id after p1", m)
	}
	a.clearOpsMark()
	// A shorter mark over a longer one's place reads as itself.
	if err := a.markOps("p2"); err != nil {
		t.Fatal(err)
	}
	if m := read(); m != (opsMark{PlanID: "p2", PrevPlanID: "p1"}) {
		t.Fatalf("mark = %+v, want p2 after p1", m)
	}
	a.clearOpsMark()
	a.clearOpsMark() // a second clear changes nothing and says nothing
	if owed, err := a.recoverOpsMark(); owed || err != nil {
		t.Errorf("after clear: owed %v, err %v; want no reload", owed, err)
	}
	if _, err := os.Stat(filepath.Join(dir, opsMarkFile)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("recovery left the blank mark (stat: %v)", err)
	}
}

func TestRecoveryReportsAnOpsMarkItCannotRead(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, opsMarkFile), 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := markAgent(t, dir, "p1").recoverOpsMark(); err == nil {
		t.Error("a mark that is a directory was not reported")
	}
}

func markAgent(t *testing.T, dir, applied string) *Agent {
	t.Helper()
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = root.Close() })
	return &Agent{state: root, log: slog.New(slog.DiscardHandler), durable: durableState{AppliedPlanID: applied}}
}
