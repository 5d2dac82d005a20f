package rendergate_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/haptic-io/haptic/internal/haproxytest"
	"github.com/haptic-io/haptic/rendergate"
	"github.com/haptic-io/haptic/renderplan"
)

// Validation is code execution: these tests feed the real haproxy -c
// configurations that try to read secrets, run commands and reach the
// network, and check that the checker refuses them or leaves them harmless.
// Where it matters, a counterfactual shows the same attack succeeding
// without the protection, so the test can fail.

const secretMarker = "TOPSECRET-7f3a9c"

// rootOnlySecret writes a file only root can read (in a 0700 directory,
// mode 0600) and returns its absolute path. It skips the test unless it
// runs as root, since the checker drops privileges only then.
func rootOnlySecret(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("the checker protects root-only files by running as nobody, which it does only when the controller is root")
	}
	p := filepath.Join(t.TempDir(), "secret")
	must(t, os.WriteFile(p, []byte(secretMarker+"\n"), 0o600))
	return p
}

// hostileOutput is the valid output plus core lines and extra files.
func hostileOutput(t *testing.T, extra string, files map[string]string) *renderplan.Output {
	t.Helper()
	b := outputBuilder(t, extra)
	for p, body := range files {
		must(t, b.File(p, renderplan.FileGeneral, []byte(body), true))
	}
	return build(t, b)
}

func TestHostileMapOfARootOnlyFileIsRefusedWithoutQuotingIt(t *testing.T) {
	secret := rootOnlySecret(t)
	// map_ip quotes a line it cannot parse in its ALERT: as root, this
	// configuration prints the first line of the file.
	out := hostileOutput(t, fmt.Sprintf("frontend fe_leak from base\n    bind 127.0.0.1:18483\n    http-request set-var(txn.x) src,map_ip(%s)\n", secret), nil)
	haproxytest.ForEachSeries(t, func(t *testing.T, series string) {
		t.Run("as nobody it cannot open the file", func(t *testing.T) {
			c := nobodyChecker(t, series)
			ce := mustRefuse(t, c.Check(context.Background(), out))
			if strings.Contains(ce.Output, secretMarker) || strings.Contains(ce.Error(), secretMarker) {
				t.Fatalf("the refusal quotes the secret:\n%s", ce.Output)
			}
			if !strings.Contains(ce.Error(), "failed to open pattern file") {
				t.Fatalf("refused for another reason: %v\n%s", ce, ce.Output)
			}
		})
		t.Run("counterfactual: as root the refusal quotes it", func(t *testing.T) {
			c := realChecker(t, series, rendergate.Config{RunAs: &rendergate.User{UID: 0, GID: 0}})
			ce := mustRefuse(t, c.Check(context.Background(), out))
			if !strings.Contains(ce.Output, secretMarker) {
				t.Fatalf("the attack does not work even as root, so the test above proves nothing:\n%s", ce.Output)
			}
		})
	})
}

func TestHostileLuaRunsWithoutSecretsEnvironmentOrNetwork(t *testing.T) {
	secret := rootOnlySecret(t)
	t.Setenv("RENDERGATE_TEST_SECRET", secretMarker)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	// Lua runs while haproxy parses the configuration. This script tries a
	// root-only file, the environment, a shell and a TCP connection to a
	// listener on the host's loopback, then reports through error(), which
	// haproxy prints as an ALERT.
	lua := fmt.Sprintf(`local f, ferr = io.open(%q, "r")
local secret = f and f:read("a") or ("open failed: " .. tostring(ferr))
local env = tostring(os.getenv("RENDERGATE_TEST_SECRET"))
local p = io.popen("id -u; /bin/bash -c 'echo hi >/dev/tcp/127.0.0.1/%d' 2>&1; echo rc=$?")
local sh = p:read("a")
p:close()
error((("REPORT secret=[" .. secret .. "] env=[" .. env .. "] sh=[" .. sh .. "]"):gsub("\n", " ")))
`, secret, port)
	out := hostileOutput(t, "", map[string]string{"lua/report.lua": lua})
	out = withConfig(t, out, "    maxconn 100\n", "    maxconn 100\n    lua-load lua/report.lua\n")
	haproxytest.ForEachSeries(t, func(t *testing.T, series string) {
		c := nobodyChecker(t, series)
		if !c.NetworkIsolated() {
			t.Skip("network namespaces are not available to this process")
		}
		ce := mustRefuse(t, c.Check(context.Background(), out))
		t.Logf("report: %s", ce.Reason)
		if !strings.Contains(ce.Reason, "REPORT") {
			t.Fatalf("the Lua did not run or report: %v\n%s", ce, ce.Output)
		}
		if strings.Contains(ce.Output, secretMarker) {
			t.Fatalf("the Lua read a secret:\n%s", ce.Output)
		}
		for _, want := range []string{"open failed: " + secret + ": Permission denied", "env=[nil]", "sh=[65534 ", "Network is unreachable", "rc=1"} {
			if !strings.Contains(ce.Reason, want) {
				t.Errorf("report lacks %q: %s", want, ce.Reason)
			}
		}
		// A connection that had been made would be queued on the listener
		// by now: the check has ended.
		must(t, ln.(*net.TCPListener).SetDeadline(time.Now()))
		if conn, err := ln.Accept(); err == nil {
			conn.Close()
			t.Fatal("the check connected to the host's loopback")
		} else if ne := (net.Error)(nil); !errors.As(err, &ne) || !ne.Timeout() {
			t.Fatalf("accept: %v", err)
		}
	})
}

func TestHostileLuaOutsideTheTreeIsRefused(t *testing.T) {
	rootOnlySecret(t) // skips unless root
	dir := t.TempDir()
	lua := filepath.Join(dir, "outside.lua")
	must(t, os.WriteFile(lua, []byte(`error("OUTSIDE-LUA-RAN")`), 0o600))
	out := withConfig(t, validOutput(t), "    maxconn 100\n", "    maxconn 100\n    lua-load "+lua+"\n")
	haproxytest.ForEachSeries(t, func(t *testing.T, series string) {
		c := nobodyChecker(t, series)
		ce := mustRefuse(t, c.Check(context.Background(), out))
		if strings.Contains(ce.Output, "OUTSIDE-LUA-RAN") || !strings.Contains(ce.Output, lua) {
			t.Fatalf("want a refusal to load %s without running it:\n%s", lua, ce.Output)
		}
	})
}

func TestHostileLuaThatNeverEndsIsKilledAtTheTimeout(t *testing.T) {
	out := hostileOutput(t, "", map[string]string{"lua/spin.lua": "while true do end\n"})
	out = withConfig(t, out, "    maxconn 100\n", "    maxconn 100\n    lua-load lua/spin.lua\n")
	haproxytest.ForEachSeries(t, func(t *testing.T, series string) {
		c := realChecker(t, series, rendergate.Config{Timeout: time.Second})
		ce := mustRefuse(t, c.Check(context.Background(), out))
		if !ce.TimedOut {
			t.Fatalf("CheckError = %+v, want a timeout", ce)
		}
	})
}

// nobodyChecker is the default checker on series, which the tests expect
// to drop to nobody; it skips when it could not (HAProxy installed where
// nobody cannot reach it, e.g. under /root, makes checks run as root).
func nobodyChecker(t *testing.T, series string) *rendergate.HAProxyChecker {
	t.Helper()
	c := realChecker(t, series, rendergate.Config{})
	if c.RunAs() == nil {
		t.Skip("HAProxy is installed where nobody cannot execute it, so checks run as root here; the privilege drop cannot be shown")
	}
	return c
}
