package haproxycheck_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/haptic-io/haptic/renderplan"
	"github.com/haptic-io/haptic/templating/haproxycheck"
)

func TestWriteFilesLaysOutTheTree(t *testing.T) {
	dir := t.TempDir()
	out := &renderplan.Output{Files: []renderplan.FileContent{
		{Path: "haproxy.cfg", Body: []byte("cfg")},
		{Path: "maps/a/b.map", Body: []byte("k v\n")},
	}}
	if err := haproxycheck.WriteFiles(dir, out); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]string{"haproxy.cfg": "cfg", "maps/a/b.map": "k v\n"} {
		b, err := os.ReadFile(filepath.Join(dir, p))
		if err != nil || string(b) != want {
			t.Errorf("%s = %q, %v; want %q", p, b, err, want)
		}
	}
}

func TestWriteFilesRefusesPathsLeavingTheDirectory(t *testing.T) {
	for _, p := range []string{"../x", "/etc/x", "a/../../x"} {
		out := &renderplan.Output{Files: []renderplan.FileContent{{Path: p}}}
		if err := haproxycheck.WriteFiles(t.TempDir(), out); err == nil {
			t.Errorf("WriteFiles accepted %q", p)
		}
	}
}

func TestCheckerRunsTheBinaryInTheTree(t *testing.T) {
	// A fake "haproxy" (a shell script) proves the arguments, working
	// directory and environment; the real binary runs in integration_test.go.
	dir := t.TempDir()
	script := filepath.Join(dir, "fake-haproxy")
	body := "#!/bin/sh\n[ \"$1 $2 $3\" = \"-c -f haproxy.cfg\" ] || { echo bad args \"$@\"; exit 2; }\n" +
		"[ -z \"$HOME\" ] || { echo env leaked; exit 3; }\n" +
		"grep -q ok haproxy.cfg || { echo '[ALERT] not ok'; exit 1; }\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	c := &haproxycheck.Checker{Binary: script, TempDir: dir}
	good := &renderplan.Output{Files: []renderplan.FileContent{{Path: "haproxy.cfg", Body: []byte("ok\n")}}}
	if err := c.Check(context.Background(), good); err != nil {
		t.Fatalf("good tree: %v", err)
	}
	bad := &renderplan.Output{Files: []renderplan.FileContent{{Path: "haproxy.cfg", Body: []byte("nope\n")}}}
	err := c.Check(context.Background(), bad)
	var ce *haproxycheck.CheckError
	if !errors.As(err, &ce) || !strings.Contains(ce.Output, "[ALERT] not ok") {
		t.Fatalf("bad tree: %v", err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("scratch directories left behind: %v", entries)
	}
}
