package main

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/haptic-io/haptic/deployplan"
)

// runDiff runs "haptic diff args…" on an app holding only the diff
// command (main.go registers it with the others).
func runDiff(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out, errOut strings.Builder
	app := &cli.App{Name: "haptic", Commands: []*cli.Command{diffCommand()}, Writer: &out, ErrWriter: &errOut,
		ExitErrHandler: func(*cli.Context, error) {}}
	err := app.Run(append([]string{"haptic", "diff"}, args...))
	if errOut.Len() > 0 {
		t.Logf("stderr:\n%s", errOut.String())
	}
	return out.String(), err
}

func TestDiffCommandEndpointChurnIsRuntimeOnEverySeries(t *testing.T) {
	for _, v := range []string{"3.0", "3.2", "3.4"} {
		out, err := runDiff(t, "--from", "testdata/diff/from", "--to", "testdata/diff/endpoint", "--haproxy-version", v)
		if err != nil {
			t.Fatalf("%s: %v", v, err)
		}
		if !strings.HasPrefix(out, "verdict runtime\n") || !strings.Contains(out, "op server.add ") || !strings.Contains(out, "op server.del ") {
			t.Errorf("%s: output:\n%s", v, out)
		}
	}
}

func TestDiffCommandNewRouteReloadsOnlyBelow34(t *testing.T) {
	out, err := runDiff(t, "--from", "testdata/diff/from", "--to", "testdata/diff/route", "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	var d deployplan.Decision
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatalf("decode %s: %v", out, err)
	}
	if d.Verdict != deployplan.VerdictRuntime || len(d.Ops) == 0 || len(d.Files) == 0 {
		t.Errorf("3.4: got %s with %d ops and %d files:\n%s", d.Verdict, len(d.Ops), len(d.Files), out)
	}

	out, err = runDiff(t, "--from", "testdata/diff/from", "--to", "testdata/diff/route", "--haproxy-version", "3.2", "--fail-on-reload")
	var ec cli.ExitCoder
	if !errors.As(err, &ec) || ec.ExitCode() != 3 {
		t.Fatalf("3.2 with --fail-on-reload: err = %v, want exit code 3", err)
	}
	if !strings.HasPrefix(out, "verdict reload\n") {
		t.Errorf("3.2: output:\n%s", out)
	}
}

func TestDiffCommandRejectsAnUnknownOutputFormat(t *testing.T) {
	if _, err := runDiff(t, "--from", "testdata/diff/from", "--to", "testdata/diff/route", "-o", "yaml"); err == nil {
		t.Fatal("diff -o yaml succeeded")
	}
}
