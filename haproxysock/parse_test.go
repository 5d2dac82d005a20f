package haproxysock_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/haptic-io/haptic/haproxysock"
)

const showProc34 = `#<PID>          <type>          <reloads>       <uptime>        <version>      
24660           master          4 [failed: 0]   0d00h01m02s     3.4.7-1        
# workers
1559            worker          0               0d00h00m00s     3.4.7-1        
# old workers
1552            worker          1               0d00h00m01s     3.4.7-1        
`

const showProc34Failed = `#<PID>          <type>          <reloads>       <uptime>        <version>      
24660           master          5 [failed: 1]   0d00h01m05s     3.4.7-1        
# workers
# old workers
1559            worker          1               0d00h00m03s     3.4.7-1        
1552            worker          2               0d00h00m04s     3.4.7-1        
`

const showProc30Failed = `#<PID>          <type>          <reloads>       <uptime>        <version>      
21185           master          1 [failed: 1]   1d02h03m04s     3.0.11-1+deb13u4
# workers
21194           worker          1               0d00h00m14s     3.0.11-1+deb13u4
# programs

`

func TestParseProcsFindsTheServingWorkerOnEveryVersion(t *testing.T) {
	tests := []struct {
		name        string
		reply       string
		wantServing int
		wantLeaving []int
		wantFailed  bool
		wantMaster  haproxysock.Proc
	}{
		{"3.4 after a good reload", showProc34, 1559, []int{1552}, false,
			haproxysock.Proc{PID: 24660, Type: "master", Reloads: 4, Uptime: 62 * time.Second, Version: "3.4.7-1"}},
		{"3.4 after a failed reload lists the serving worker as old", showProc34Failed, 1559, []int{1552}, true,
			haproxysock.Proc{PID: 24660, Type: "master", Reloads: 5, Failed: 1, Uptime: 65 * time.Second, Version: "3.4.7-1"}},
		{"3.0 after a failed reload keeps it under workers", showProc30Failed, 21194, nil, true,
			haproxysock.Proc{PID: 21185, Type: "master", Reloads: 1, Failed: 1, Uptime: 26*time.Hour + 3*time.Minute + 4*time.Second, Version: "3.0.11-1+deb13u4"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := haproxysock.ParseProcs(tt.reply)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.wantMaster, p.Master); diff != "" {
				t.Errorf("master (-want +got):\n%s", diff)
			}
			s, ok := p.Serving()
			if !ok || s.PID != tt.wantServing {
				t.Errorf("serving = %d, %v; want %d", s.PID, ok, tt.wantServing)
			}
			var leaving []int
			for _, l := range p.Leaving() {
				leaving = append(leaving, l.PID)
			}
			if diff := cmp.Diff(tt.wantLeaving, leaving); diff != "" {
				t.Errorf("leaving (-want +got):\n%s", diff)
			}
			if p.LastReloadFailed() != tt.wantFailed {
				t.Errorf("LastReloadFailed = %v, want %v", p.LastReloadFailed(), tt.wantFailed)
			}
		})
	}
}

func TestParseProcsRejectsGarbage(t *testing.T) {
	for _, reply := range []string{"", "Unknown command", "# workers\n12 worker x 0d00h00m00s 3.4\n", "1 master 0 [failed: x] 0d 3.4\n"} {
		if _, err := haproxysock.ParseProcs(reply); !errors.Is(err, haproxysock.ErrProtocol) {
			t.Errorf("ParseProcs(%q) = %v, want ErrProtocol", reply, err)
		}
	}
}

const reload34Failed = `Success=0
--
[NOTICE]   (24660) : Initializing new worker (1600)
[ALERT]    (1600) : config : parsing [/x/haproxy.cfg:22] : unknown keyword 'this_is_not_a_keyword' in 'frontend' section
[ALERT]    (1600) : config : Error(s) found in configuration file : /x/haproxy.cfg
[WARNING]  (24660) : Failed to load worker (1600) exited with code 1 (Exit)
`

func TestParseReloadKeepsAlertsAndLog(t *testing.T) {
	tests := []struct {
		name  string
		reply string
		want  haproxysock.ReloadResult
	}{
		{"success", "Success=1\n--\n[NOTICE]   (1) : Loading success.\n", haproxysock.ReloadResult{Success: true, Log: "[NOTICE]   (1) : Loading success."}},
		{"success without log", "Success=1\n", haproxysock.ReloadResult{Success: true}},
		{"failure", reload34Failed, haproxysock.ReloadResult{
			Log: strings.TrimSuffix(strings.SplitN(reload34Failed, "\n", 3)[2], "\n"),
			Alerts: []string{
				"[ALERT]    (1600) : config : parsing [/x/haproxy.cfg:22] : unknown keyword 'this_is_not_a_keyword' in 'frontend' section",
				"[ALERT]    (1600) : config : Error(s) found in configuration file : /x/haproxy.cfg",
			}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := haproxysock.ParseReload(tt.reply)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	if _, err := haproxysock.ParseReload("Unknown command\n"); !errors.Is(err, haproxysock.ErrProtocol) {
		t.Errorf("garbage reply: %v, want ErrProtocol", err)
	}
}

func TestParseInfoReadsWorkerIdentity(t *testing.T) {
	reply := "Name: HAProxy\nVersion: 3.4.7-1\nPid: 21193\nUptime: 0d 0h00m06s\nUptime_sec: 6\nnode: vm\nStart_time_sec: 1795951482\n"
	got, err := haproxysock.ParseInfo(reply)
	if err != nil {
		t.Fatal(err)
	}
	if got.PID != 21193 || got.Version != "3.4.7-1" || got.Uptime != 6*time.Second || !got.StartTime.Equal(time.Unix(1795951482, 0)) {
		t.Errorf("got %+v", got)
	}
	if got.Fields["node"] != "vm" {
		t.Errorf("fields: %v", got.Fields)
	}
	if _, err := haproxysock.ParseInfo("Name: HAProxy\n"); !errors.Is(err, haproxysock.ErrProtocol) {
		t.Errorf("no pid: %v, want ErrProtocol", err)
	}
}

func TestParsePrepareMapReadsTheVersion(t *testing.T) {
	v, err := haproxysock.ParsePrepareMap("New version created: 12")
	if err != nil || v != 12 {
		t.Errorf("got %d, %v", v, err)
	}
	if _, err := haproxysock.ParsePrepareMap("Unknown map identifier."); !errors.Is(err, haproxysock.ErrProtocol) {
		t.Errorf("got %v, want ErrProtocol", err)
	}
}

// FuzzParseProcs: the show proc parser never panics, and whatever it
// accepts names a serving worker that is one of the listed workers.
func FuzzParseProcs(f *testing.F) {
	f.Add(showProc34)
	f.Add(showProc34Failed)
	f.Add(showProc30Failed)
	f.Fuzz(func(t *testing.T, reply string) {
		p, err := haproxysock.ParseProcs(reply)
		if err != nil {
			if !errors.Is(err, haproxysock.ErrProtocol) {
				t.Fatalf("error %v is not ErrProtocol", err)
			}
			return
		}
		if p.Master.PID <= 0 {
			t.Fatalf("accepted master pid %d", p.Master.PID)
		}
		s, ok := p.Serving()
		if ok != (len(p.Workers)+len(p.OldWorkers) > 0) {
			t.Fatalf("serving found=%v with %d workers", ok, len(p.Workers)+len(p.OldWorkers))
		}
		if ok && len(p.Leaving()) != len(p.Workers)+len(p.OldWorkers)-1 && s.PID > 0 {
			// Duplicate PIDs in a forged reply may drop more than one.
			for _, l := range p.Leaving() {
				if l.PID == s.PID {
					t.Fatalf("serving worker %d also listed as leaving", s.PID)
				}
			}
		}
	})
}

// FuzzParseReload: any accepted reply starts with a Success line and its
// alerts are lines of its log.
func FuzzParseReload(f *testing.F) {
	f.Add("Success=1\n--\n[NOTICE] x\n")
	f.Add(reload34Failed)
	f.Fuzz(func(t *testing.T, reply string) {
		r, err := haproxysock.ParseReload(reply)
		if err != nil {
			if !errors.Is(err, haproxysock.ErrProtocol) {
				t.Fatalf("error %v is not ErrProtocol", err)
			}
			return
		}
		if !strings.HasPrefix(strings.TrimLeft(reply, "\n"), "Success=") {
			t.Fatalf("accepted %q", reply)
		}
		for _, a := range r.Alerts {
			if !strings.HasPrefix(a, "[ALERT]") || !strings.Contains(r.Log, a) {
				t.Fatalf("alert %q not an [ALERT] line of the log", a)
			}
		}
	})
}

// FuzzParseInfo: accepted replies have a positive PID and a version.
func FuzzParseInfo(f *testing.F) {
	f.Add("Version: 3.0.11\nPid: 7\nUptime_sec: 1\n")
	f.Fuzz(func(t *testing.T, reply string) {
		info, err := haproxysock.ParseInfo(reply)
		if err != nil {
			if !errors.Is(err, haproxysock.ErrProtocol) {
				t.Fatalf("error %v is not ErrProtocol", err)
			}
			return
		}
		if info.PID <= 0 || info.Version == "" || info.Uptime < 0 {
			t.Fatalf("accepted %+v", info)
		}
	})
}
