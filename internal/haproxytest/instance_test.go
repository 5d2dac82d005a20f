package haproxytest_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/haptic-io/haptic/internal/haproxytest"
)

func TestStartServesTheMinimalFrontendOnEverySeries(t *testing.T) {
	haproxytest.ForEachSeries(t, func(t *testing.T, series string) {
		inst := haproxytest.Start(t, series, haproxytest.Options{})
		if !strings.HasPrefix(inst.Version, series+".") {
			t.Errorf("Version = %q, want series %s", inst.Version, series)
		}
		if inst.Port == 0 {
			t.Fatal("Port = 0 for the minimal config")
		}
		status, body := haproxytest.Get(t, fmt.Sprintf("http://127.0.0.1:%d/", inst.Port), "example.test")
		if status != 200 || body != "ok" {
			t.Errorf("GET = %d %q, want 200 \"ok\"", status, body)
		}
	})
}

func TestCmdShowInfoReportsTheVersion(t *testing.T) {
	haproxytest.ForEachSeries(t, func(t *testing.T, series string) {
		inst := haproxytest.Start(t, series, haproxytest.Options{})
		info := inst.Cmd(t, "show info")
		if want := "Version: " + inst.Version + "\n"; !strings.Contains(info, want) {
			t.Errorf("show info lacks %q:\n%s", want, info)
		}
	})
}

func TestMasterCmdShowProcListsAWorker(t *testing.T) {
	haproxytest.ForEachSeries(t, func(t *testing.T, series string) {
		inst := haproxytest.Start(t, series, haproxytest.Options{})
		proc := inst.MasterCmd(t, "show proc")
		if master := masterPIDRe.FindStringSubmatch(proc); master == nil || master[1] != strconv.Itoa(inst.MasterPID) {
			t.Errorf("show proc does not list master %d:\n%s", inst.MasterPID, proc)
		}
		if len(workerPIDs(proc)) == 0 {
			t.Errorf("show proc lists no worker:\n%s", proc)
		}
	})
}

func TestCleanupLeavesNoProcess(t *testing.T) {
	haproxytest.ForEachSeries(t, func(t *testing.T, series string) {
		var pids []int
		var dir string
		t.Run("run", func(t *testing.T) {
			inst := haproxytest.Start(t, series, haproxytest.Options{})
			dir = inst.Dir
			pids = append([]int{inst.MasterPID}, workerPIDs(inst.MasterCmd(t, "show proc"))...)
			if len(pids) < 2 {
				t.Fatalf("no worker PID in show proc")
			}
		})
		for _, pid := range pids {
			if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
				t.Errorf("process %d still exists after cleanup (kill 0: %v)", pid, err)
			}
		}
		if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("instance dir %s still exists after cleanup (stat: %v)", dir, err)
		}
	})
}

func TestStartUsesConfigFilesAndGlobalLines(t *testing.T) {
	series := haproxytest.AllSeries()[len(haproxytest.AllSeries())-1]
	port := 0
	inst := haproxytest.Start(t, series, haproxytest.Options{
		Files:  map[string]string{"maps/hosts.map": "a.test be_a\n"},
		Global: []string{"maxconn 123"},
		Config: func(dir string) string {
			port = haproxytest.FreePort(t)
			return fmt.Sprintf(`defaults
    mode http
    timeout connect 5s
    timeout client 5s
    timeout server 5s

frontend fe
    bind 127.0.0.1:%d
    http-request return status 200 content-type text/plain lf-string "%%[req.hdr(host),map(%s)]"
`, port, filepath.Join(dir, "maps/hosts.map"))
		},
	})
	if inst.Port != 0 {
		t.Errorf("Port = %d with a custom Config, want 0", inst.Port)
	}
	if info := inst.Cmd(t, "show info"); !strings.Contains(info, "Maxconn: 123\n") {
		t.Errorf("global maxconn 123 not applied; show info:\n%s", info)
	}
	status, body := haproxytest.Get(t, fmt.Sprintf("http://127.0.0.1:%d/", port), "a.test")
	if status != 200 || body != "be_a" {
		t.Errorf("GET a.test = %d %q, want 200 \"be_a\"", status, body)
	}
}

func TestWriteFileRejectsPathsOutsideTheDir(t *testing.T) {
	series := haproxytest.AllSeries()[0]
	inst := haproxytest.Start(t, series, haproxytest.Options{})
	inst.WriteFile(t, "certs/a/b.pem", "x")
	if got, err := os.ReadFile(filepath.Join(inst.Dir, "certs/a/b.pem")); err != nil || string(got) != "x" {
		t.Errorf("WriteFile wrote %q, %v; want \"x\"", got, err)
	}
	for _, rel := range []string{"../escape", "/abs/path"} {
		ft := &fatalRecorder{TB: t}
		ft.run(func() { inst.WriteFile(ft, rel, "x") })
		if !ft.fatal {
			t.Errorf("WriteFile(%q) did not fail", rel)
		}
	}
}

func TestStartFailureShowsHAProxyOutput(t *testing.T) {
	series := haproxytest.AllSeries()[0]
	haproxytest.Binary(t, series) // skip early when there is no HAProxy
	ft := &fatalRecorder{TB: t}
	ft.run(func() {
		haproxytest.Start(ft, series, haproxytest.Options{
			Config: func(string) string { return "frontend fe\n    this_is_not_a_keyword on\n" },
		})
	})
	defer ft.cleanup()
	if !ft.fatal {
		t.Fatal("Start with a broken config did not fail")
	}
	if !strings.Contains(ft.msg, "this_is_not_a_keyword") || !strings.Contains(ft.msg, "ALERT") {
		t.Errorf("failure message lacks HAProxy's error output:\n%s", ft.msg)
	}
}

var (
	masterPIDRe = regexp.MustCompile(`(?m)^(\d+)\s+master\s`)
	workerPIDRe = regexp.MustCompile(`(?m)^(\d+)\s+worker\s`)
)

func workerPIDs(showProc string) []int {
	var pids []int
	for _, m := range workerPIDRe.FindAllStringSubmatch(showProc, -1) {
		pid, _ := strconv.Atoi(m[1])
		pids = append(pids, pid)
	}
	return pids
}

func TestBinaryFailsOnCIAndSkipsElsewhere(t *testing.T) {
	if testing.Short() {
		t.Skip("Binary skips everything under -short; this test checks the other paths")
	}
	for _, ci := range []string{"true", ""} {
		t.Run("CI="+ci, func(t *testing.T) {
			t.Setenv("CI", ci)
			ft := &fatalRecorder{TB: t}
			ft.run(func() { haproxytest.Binary(ft, "2.6") }) // unsupported: nothing to install
			if got, want := ft.fatal, ci == "true"; got != want {
				t.Errorf("fatal = %v, want %v (msg %q)", got, want, ft.msg)
			}
			if got, want := ft.skipped, ci != "true"; got != want {
				t.Errorf("skipped = %v, want %v (msg %q)", got, want, ft.msg)
			}
			if !strings.Contains(ft.msg, `unsupported series "2.6"`) {
				t.Errorf("message lacks the reason: %q", ft.msg)
			}
		})
	}
}
