package haproxytest

import (
	"bytes"
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// installScript is the install script's path relative to the repository root.
const installScript = "hack/install-haproxy.sh"

// installTimeout bounds one run of the install script (a cold install
// downloads the package lists and ~15 packages).
const installTimeout = 15 * time.Minute

// AllSeries returns the supported HAProxy series: "3.0", "3.2", "3.4".
func AllSeries() []string { return []string{"3.0", "3.2", "3.4"} }

// ForEachSeries runs f in a subtest named after each series.
func ForEachSeries(t *testing.T, f func(t *testing.T, series string)) {
	t.Helper()
	for _, s := range AllSeries() {
		t.Run(s, func(t *testing.T) { f(t, s) })
	}
}

// Binary returns the haproxy binary for series. It finds it at
// <repo>/.cache/haproxy/<series>/sbin/haproxy (repo found by walking up from
// the working directory to the directory holding hack/install-haproxy.sh;
// HAPTIC_CACHE_DIR overrides <repo>/.cache; a relative one is taken from the
// repository root), running the install script if it
// is missing (the script locks, so parallel callers are safe). If
// HAPTIC_HAPROXY names a binary of this series, Binary returns it instead. Under
// testing.Short() it skips the test. If it cannot get a binary it fails the
// test when CI=true and skips it otherwise, giving the reason.
func Binary(t testing.TB, series string) string {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test: needs real HAProxy; skipped in -short")
	}
	bin, err := binary(series)
	if err != nil {
		unavailable(t, fmt.Errorf("haproxy %s: %w", series, err))
	}
	return bin
}

// unavailable fails the test on CI and skips it elsewhere.
func unavailable(t testing.TB, err error) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("%v (CI=true: a missing HAProxy is a failure)", err)
	}
	t.Skipf("integration test skipped: %v", err)
}

func binary(series string) (string, error) {
	if !knownSeries(series) {
		return "", fmt.Errorf("unsupported series %q (supported: %s)", series, strings.Join(AllSeries(), ", "))
	}
	if bin := os.Getenv("HAPTIC_HAPROXY"); bin != "" {
		// Same rule as the install script: use it when it is this series.
		if v, err := binaryVersion(bin); err == nil && seriesOf(v) == series {
			return bin, nil
		}
	}
	repo, err := repoRoot()
	if err != nil {
		return "", err
	}
	cache := os.Getenv("HAPTIC_CACHE_DIR")
	switch {
	case cache == "":
		cache = filepath.Join(repo, ".cache")
	case !filepath.IsAbs(cache):
		cache = filepath.Join(repo, cache) // the script runs in the repo root
	}
	dest := filepath.Join(cache, "haproxy", series)
	bin := filepath.Join(dest, "sbin", "haproxy")
	// INSTALLED is written last by the script, after the binary verified. A
	// moved repository leaves the patched loader path dangling: the script
	// notices and reinstalls.
	if _, err := os.Stat(filepath.Join(dest, "INSTALLED")); err == nil && isExecutable(bin) && interpreterExists(bin) {
		return bin, nil
	}
	return install(repo, cache, series)
}

// seriesOf returns "X.Y" for a version like "3.4.7-1".
func seriesOf(version string) string {
	parts := strings.SplitN(version, ".", 3)
	if len(parts) < 2 {
		return ""
	}
	return parts[0] + "." + parts[1]
}

func knownSeries(series string) bool {
	for _, s := range AllSeries() {
		if s == series {
			return true
		}
	}
	return false
}

func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}

// interpreterExists reports whether bin's ELF program interpreter (the
// private loader the install script set) exists.
func interpreterExists(bin string) bool {
	f, err := elf.Open(bin)
	if err != nil {
		return false
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type != elf.PT_INTERP {
			continue
		}
		b, err := io.ReadAll(p.Open())
		if err != nil {
			return false
		}
		_, err = os.Stat(strings.TrimRight(string(b), "\x00"))
		return err == nil
	}
	return true // statically linked
}

// repoRoot walks up from the working directory to the directory that holds
// the install script.
func repoRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("find repository root: %w", err)
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, installScript)); err == nil {
			return dir, nil
		}
		if filepath.Dir(dir) == dir {
			return "", fmt.Errorf("find repository root: no %s in %s or any parent", installScript, wd)
		}
	}
}

// install runs the install script and returns the path it prints last.
func install(repo, cache, series string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), installTimeout)
	defer cancel()
	script := filepath.Join(repo, installScript)
	cmd := exec.CommandContext(ctx, "bash", script, series)
	cmd.Dir = repo
	cmd.Env = append(os.Environ(), "HAPTIC_CACHE_DIR="+cache)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			err = fmt.Errorf("timed out after %v: %w", installTimeout, err)
		}
		return "", fmt.Errorf("%s %s: %w\n%s", script, series, err, strings.TrimSpace(stderr.String()))
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	bin := strings.TrimSpace(lines[len(lines)-1])
	if !isExecutable(bin) {
		return "", fmt.Errorf("%s %s printed %q, which is not an executable file\n%s", script, series, bin, strings.TrimSpace(stderr.String()))
	}
	return bin, nil
}
