package haproxytest

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// runScript runs hack/install-haproxy.sh with args and extra environment and
// returns its last stdout line and its stderr.
func runScript(t *testing.T, env []string, args ...string) (last, stderr string, err error) {
	t.Helper()
	repo, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), installTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", append([]string{filepath.Join(repo, installScript)}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	return lines[len(lines)-1], errOut.String(), err
}

// withoutEnvBinary makes the test see no HAPTIC_HAPROXY.
func withoutEnvBinary(t *testing.T) {
	t.Setenv("HAPTIC_HAPROXY", "")
	if err := os.Unsetenv("HAPTIC_HAPROXY"); err != nil {
		t.Fatal(err)
	}
}

func TestInstallScriptIsIdempotent(t *testing.T) {
	withoutEnvBinary(t)
	ForEachSeries(t, func(t *testing.T, series string) {
		bin := Binary(t, series)
		for run := 1; run <= 2; run++ {
			got, stderr, err := runScript(t, nil, series)
			if err != nil {
				t.Fatalf("run %d: %v\n%s", run, err, stderr)
			}
			if got != bin {
				t.Errorf("run %d printed %q, want %q", run, got, bin)
			}
		}
	})
}

func TestInstallScriptConcurrentRunsInstallOnceAndRepairABrokenBinary(t *testing.T) {
	withoutEnvBinary(t)
	const series = "3.2"
	Binary(t, series) // skips under -short; warms the shared package cache
	dest := filepath.Join(t.TempDir(), "hx")
	want := filepath.Join(dest, "sbin", "haproxy")

	var wg sync.WaitGroup
	results := make([]string, 2)
	errs := make([]error, 2)
	stderrs := make([]string, 2)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], stderrs[i], errs[i] = runScript(t, nil, series, dest)
		}()
	}
	wg.Wait()
	for i := range results {
		if errs[i] != nil || results[i] != want {
			t.Fatalf("concurrent run %d: printed %q, err %v, want %q\n%s", i, results[i], errs[i], want, stderrs[i])
		}
	}
	if n := strings.Count(stderrs[0]+stderrs[1], "installed HAProxy"); n != 1 {
		t.Errorf("%d of 2 concurrent runs installed; want exactly 1\n%s\n%s", n, stderrs[0], stderrs[1])
	}
	if v, err := binaryVersion(want); err != nil || seriesOf(v) != series {
		t.Fatalf("%s -v = %q, %v; want series %s", want, v, err, series)
	}

	// Without its DT_RPATH the binary would load the system's libraries: the
	// script must notice and reinstall.
	if out, err := exec.Command("patchelf", "--remove-rpath", want).CombinedOutput(); err != nil {
		t.Fatalf("patchelf --remove-rpath: %v: %s", err, out)
	}
	got, stderr, err := runScript(t, nil, series, dest)
	if err != nil || got != want {
		t.Fatalf("repair run printed %q, err %v, want %q\n%s", got, err, want, stderr)
	}
	if !strings.Contains(stderr, "reinstalling "+dest) {
		t.Errorf("repair run did not say it reinstalls:\n%s", stderr)
	}
	ldso := filepath.Join(dest, "root/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2")
	if _, err := os.Stat(ldso); err != nil {
		t.Skipf("not amd64 (%v); library check skipped", err)
	}
	list, err := exec.Command(ldso, "--list", want).CombinedOutput()
	if err != nil {
		t.Fatalf("ld.so --list: %v: %s", err, list)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(list)), "\n") {
		if strings.Contains(line, "=>") && !strings.Contains(line, "=> "+dest+"/root/") {
			t.Errorf("library outside %s/root after repair: %s", dest, line)
		}
	}
}

func TestInstallScriptPrefersHAPTIC_HAPROXYOfTheSameSeries(t *testing.T) {
	withoutEnvBinary(t)
	bin34 := Binary(t, "3.4")
	bin30 := Binary(t, "3.0")
	dest := filepath.Join(t.TempDir(), "unused")
	got, stderr, err := runScript(t, []string{"HAPTIC_HAPROXY=" + bin34}, "3.4", dest)
	if err != nil || got != bin34 {
		t.Fatalf("printed %q, err %v; want %q\n%s", got, err, bin34, stderr)
	}
	if _, err := os.Stat(dest); !os.IsNotExist(err) {
		t.Errorf("DEST %s was touched (stat: %v)", dest, err)
	}
	got, stderr, err = runScript(t, []string{"HAPTIC_HAPROXY=" + bin34}, "3.0")
	if err != nil || got != bin30 {
		t.Fatalf("series 3.0 with a 3.4 HAPTIC_HAPROXY printed %q, err %v; want %q\n%s", got, err, bin30, stderr)
	}
	if !strings.Contains(stderr, "ignoring HAPTIC_HAPROXY") {
		t.Errorf("no note that HAPTIC_HAPROXY was ignored:\n%s", stderr)
	}
}

func TestInstallScriptRejectsUnknownSeries(t *testing.T) {
	Binary(t, "3.4") // needs the package lists: skip when HAProxy cannot be had
	withoutEnvBinary(t)
	for _, tt := range []struct{ series, want string }{
		{"3", "series must look like 3.4"},
		{"9.9", "no HAProxy 9.9 in Debian"},
	} {
		got, stderr, err := runScript(t, nil, tt.series, filepath.Join(t.TempDir(), "d"))
		if err == nil {
			t.Errorf("series %q: exit 0 (printed %q), want an error", tt.series, got)
			continue
		}
		if !strings.Contains(stderr, tt.want) {
			t.Errorf("series %q: stderr lacks %q:\n%s", tt.series, tt.want, stderr)
		}
	}
}

func TestInterpreterExistsFollowsThePatchedLoader(t *testing.T) {
	bin := Binary(t, "3.4")
	if !interpreterExists(bin) {
		t.Fatalf("interpreterExists(%s) = false for an installed binary", bin)
	}
	moved := filepath.Join(t.TempDir(), "haproxy")
	if out, err := exec.Command("cp", bin, moved).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v: %s", err, out)
	}
	if out, err := exec.Command("patchelf", "--set-interpreter", "/nonexistent/ld.so", moved).CombinedOutput(); err != nil {
		t.Fatalf("patchelf: %v: %s", err, out)
	}
	if interpreterExists(moved) {
		t.Errorf("interpreterExists = true for a binary whose loader is /nonexistent/ld.so")
	}
}
