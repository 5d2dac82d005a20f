package haproxysock_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/haptic-io/haptic/haproxysock"
)

func TestBuildersProduceExactWireLines(t *testing.T) {
	const m = "/etc/haproxy/maps/hosts.map"
	tests := []struct {
		name    string
		build   func() (haproxysock.Command, error)
		want    string
		payload []string
	}{
		{"add server with options", func() (haproxysock.Command, error) {
			return haproxysock.AddServer("be_app", "pod-a", "10.0.0.7", 8080, haproxysock.ServerOptions{
				Weight: 50, Check: true, CheckInter: time.Second, GUID: "be_app-pod-a", Extra: []string{"ssl", "verify", "none"}})
		}, "add server be_app/pod-a 10.0.0.7:8080 weight 50 check inter 1000 guid be_app-pod-a ssl verify none", nil},
		{"add server without port", func() (haproxysock.Command, error) {
			return haproxysock.AddServer("be", "s", "127.0.0.1", 0, haproxysock.ServerOptions{})
		}, "add server be/s 127.0.0.1", nil},
		{"add server escapes an extra keyword", func() (haproxysock.Command, error) {
			return haproxysock.AddServer("be", "s", "127.0.0.1", 80, haproxysock.ServerOptions{Extra: []string{"sni", "str(a;b c)"}})
		}, `add server be/s 127.0.0.1:80 sni str(a\;b\ c)`, nil},
		{"set server addr and port", func() (haproxysock.Command, error) {
			return haproxysock.SetServerAddr("be", "s", "127.0.0.2", 19004)
		}, "set server be/s addr 127.0.0.2 port 19004", nil},
		{"set server weight", func() (haproxysock.Command, error) { return haproxysock.SetServerWeight("be", "s", 0) }, "set server be/s weight 0", nil},
		{"set server state", func() (haproxysock.Command, error) {
			return haproxysock.SetServerState("be", "s", haproxysock.StateDrain)
		}, "set server be/s state drain", nil},
		{"enable health", func() (haproxysock.Command, error) { return haproxysock.EnableHealth("be", "s") }, "enable health be/s", nil},
		{"del server", func() (haproxysock.Command, error) { return haproxysock.DelServer("be", "s") }, "del server be/s", nil},
		{"shutdown sessions", func() (haproxysock.Command, error) { return haproxysock.ShutdownSessionsServer("be", "s") }, "shutdown sessions server be/s", nil},
		{"wait srv-removable", func() (haproxysock.Command, error) {
			return haproxysock.WaitServerRemovable(1500*time.Millisecond, "be", "s")
		}, "wait 1500 srv-removable be/s", nil},
		{"add backend", func() (haproxysock.Command, error) {
			return haproxysock.AddBackend("be_new", "profile_http", haproxysock.BackendOptions{Mode: "http", GUID: "g-1"})
		}, "add backend be_new from profile_http mode http guid g-1", nil},
		{"publish backend", func() (haproxysock.Command, error) { return haproxysock.PublishBackend("be_new") }, "publish backend be_new", nil},
		{"unpublish backend", func() (haproxysock.Command, error) { return haproxysock.UnpublishBackend("be_new") }, "unpublish backend be_new", nil},
		{"del backend", func() (haproxysock.Command, error) { return haproxysock.DelBackend("be_new") }, "del backend be_new", nil},
		{"wait be-removable", func() (haproxysock.Command, error) {
			return haproxysock.WaitBackendRemovable(time.Second, "be_new")
		}, "wait 1000 be-removable be_new", nil},
		{"set map escapes spaces", func() (haproxysock.Command, error) { return haproxysock.SetMap(m, "k", "a b") }, `set map ` + m + ` k a\ b`, nil},
		{"add map escapes separators", func() (haproxysock.Command, error) {
			return haproxysock.AddMap(m, "k", `a;show info\`)
		}, `add map ` + m + ` k a\;show\ info\\`, nil},
		{"add map by id", func() (haproxysock.Command, error) { return haproxysock.AddMap("#4", "k", "v") }, "add map #4 k v", nil},
		{"del map", func() (haproxysock.Command, error) { return haproxysock.DelMap(m, "k") }, "del map " + m + " k", nil},
		{"get map", func() (haproxysock.Command, error) { return haproxysock.GetMap(m, "k") }, "get map " + m + " k", nil},
		{"clear map", func() (haproxysock.Command, error) { return haproxysock.ClearMap(m) }, "clear map " + m, nil},
		{"show maps", func() (haproxysock.Command, error) { return haproxysock.ShowMap("") }, "show map", nil},
		{"prepare map", func() (haproxysock.Command, error) { return haproxysock.PrepareMap(m) }, "prepare map " + m, nil},
		{"add map version", func() (haproxysock.Command, error) { return haproxysock.AddMapVersion(3, m, "k", "v") }, "add map @3 " + m + " k v", nil},
		{"commit map", func() (haproxysock.Command, error) { return haproxysock.CommitMap(3, m) }, "commit map @3 " + m, nil},
		{"show map version", func() (haproxysock.Command, error) { return haproxysock.ShowMapVersion(3, m) }, "show map @3 " + m, nil},
		{"add map payload", func() (haproxysock.Command, error) {
			return haproxysock.AddMapPayload(m, []haproxysock.MapEntry{{"a.test", "be_a"}, {"b.test", "x;y z"}})
		}, "add map " + m + " <<", []string{"a.test be_a", "b.test x;y z"}},
		{"add map version payload", func() (haproxysock.Command, error) {
			return haproxysock.AddMapVersionPayload(2, m, []haproxysock.MapEntry{{"a", "b"}})
		}, "add map @2 " + m + " <<", []string{"a b"}},
		{"new ssl cert", func() (haproxysock.Command, error) { return haproxysock.NewSSLCert("/c/a.pem") }, "new ssl cert /c/a.pem", nil},
		{"set ssl cert strips blank lines", func() (haproxysock.Command, error) {
			return haproxysock.SetSSLCert("/c/a.pem", []byte("-----BEGIN X-----\r\nAAA\n\n-----END X-----\n\n"))
		}, "set ssl cert /c/a.pem <<", []string{"-----BEGIN X-----", "AAA", "-----END X-----"}},
		{"commit ssl cert", func() (haproxysock.Command, error) { return haproxysock.CommitSSLCert("/c/a.pem") }, "commit ssl cert /c/a.pem", nil},
		{"abort ssl cert", func() (haproxysock.Command, error) { return haproxysock.AbortSSLCert("/c/a.pem") }, "abort ssl cert /c/a.pem", nil},
		{"del ssl cert", func() (haproxysock.Command, error) { return haproxysock.DelSSLCert("/c/a.pem") }, "del ssl cert /c/a.pem", nil},
		{"add ssl crt-list", func() (haproxysock.Command, error) { return haproxysock.AddSSLCrtList("/c/l.txt", "/c/a.pem") }, "add ssl crt-list /c/l.txt /c/a.pem", nil},
		{"add ssl crt-list payload", func() (haproxysock.Command, error) {
			return haproxysock.AddSSLCrtListEntries("/c/l.txt", []haproxysock.CrtListEntry{
				{Cert: "/c/a.pem", Options: []string{"alpn", "h2,http/1.1"}, SNI: []string{"a.test", "*.a.test"}},
				{Cert: "/c/b.pem"},
			})
		}, "add ssl crt-list /c/l.txt <<", []string{"/c/a.pem [alpn h2,http/1.1] a.test *.a.test", "/c/b.pem"}},
		{"del ssl crt-list", func() (haproxysock.Command, error) { return haproxysock.DelSSLCrtList("/c/l.txt", "/c/a.pem") }, "del ssl crt-list /c/l.txt /c/a.pem", nil},
		{"show servers state", func() (haproxysock.Command, error) { return haproxysock.ShowServersState("be") }, "show servers state be", nil},
		{"show info", func() (haproxysock.Command, error) { return haproxysock.ShowInfo(), nil }, "show info", nil},
		{"show backend", func() (haproxysock.Command, error) { return haproxysock.ShowBackend(), nil }, "show backend", nil},
		{"show stat", func() (haproxysock.Command, error) { return haproxysock.ShowStat(), nil }, "show stat", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := tt.build()
			if err != nil {
				t.Fatalf("build: %v", err)
			}
			if diff := cmp.Diff(tt.want, c.String()); diff != "" {
				t.Errorf("line (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.payload, c.Payload()); diff != "" {
				t.Errorf("payload (-want +got):\n%s", diff)
			}
			cmds, payload := cliSplit(c.String())
			if len(cmds) != 1 {
				t.Fatalf("line splits into %d commands: %q", len(cmds), cmds)
			}
			if payload != (tt.payload != nil) {
				t.Errorf("payload mode = %v, want %v", payload, tt.payload != nil)
			}
			args := cmds[0]
			if payload {
				args = args[:len(args)-1]
			}
			if diff := cmp.Diff(c.Args(), args); diff != "" {
				t.Errorf("tokenized args (-built +tokenized):\n%s", diff)
			}
		})
	}
}

func TestBuildersRefuseInjectionAttempts(t *testing.T) {
	const m = "/m.map"
	tests := []struct {
		name  string
		build func() (haproxysock.Command, error)
	}{
		{"backend with space", func() (haproxysock.Command, error) { return haproxysock.DelBackend("be x") }},
		{"backend with semicolon", func() (haproxysock.Command, error) { return haproxysock.PublishBackend("be;show info") }},
		{"backend with newline", func() (haproxysock.Command, error) { return haproxysock.UnpublishBackend("be\nshow info") }},
		{"backend with slash", func() (haproxysock.Command, error) { return haproxysock.DelServer("be/x", "s") }},
		{"empty backend", func() (haproxysock.Command, error) { return haproxysock.DelBackend("") }},
		{"server with backslash", func() (haproxysock.Command, error) { return haproxysock.DelServer("be", `s\`) }},
		{"server with NUL", func() (haproxysock.Command, error) { return haproxysock.EnableHealth("be", "s\x00") }},
		{"profile with quote", func() (haproxysock.Command, error) {
			return haproxysock.AddBackend("be", "p'", haproxysock.BackendOptions{})
		}},
		{"bad mode", func() (haproxysock.Command, error) {
			return haproxysock.AddBackend("be", "p", haproxysock.BackendOptions{Mode: "http;x"})
		}},
		{"guid with space", func() (haproxysock.Command, error) {
			return haproxysock.AddServer("be", "s", "127.0.0.1", 80, haproxysock.ServerOptions{GUID: "a b"})
		}},
		{"address with semicolon", func() (haproxysock.Command, error) {
			return haproxysock.AddServer("be", "s", "1.2.3.4;show", 80, haproxysock.ServerOptions{})
		}},
		{"address with space", func() (haproxysock.Command, error) { return haproxysock.SetServerAddr("be", "s", "1.2.3.4 port", 0) }},
		{"port out of range", func() (haproxysock.Command, error) {
			return haproxysock.AddServer("be", "s", "1.2.3.4", 70000, haproxysock.ServerOptions{})
		}},
		{"extra keyword with newline", func() (haproxysock.Command, error) {
			return haproxysock.AddServer("be", "s", "1.2.3.4", 80, haproxysock.ServerOptions{Extra: []string{"check\nshow info"}})
		}},
		{"extra keyword starting a payload", func() (haproxysock.Command, error) {
			return haproxysock.AddServer("be", "s", "1.2.3.4", 80, haproxysock.ServerOptions{Extra: []string{"<<"}})
		}},
		{"too many extra keywords", func() (haproxysock.Command, error) {
			return haproxysock.AddServer("be", "s", "1.2.3.4", 80, haproxysock.ServerOptions{Extra: strings.Fields(strings.Repeat("x ", 61))})
		}},
		{"bad state", func() (haproxysock.Command, error) { return haproxysock.SetServerState("be", "s", "up;x") }},
		{"weight too big", func() (haproxysock.Command, error) { return haproxysock.SetServerWeight("be", "s", 257) }},
		{"wait too short", func() (haproxysock.Command, error) { return haproxysock.WaitServerRemovable(0, "be", "s") }},
		{"map value with newline", func() (haproxysock.Command, error) { return haproxysock.SetMap(m, "k", "v\nshow info") }},
		{"map value with carriage return", func() (haproxysock.Command, error) { return haproxysock.AddMap(m, "k", "v\r") }},
		{"map value starting a payload", func() (haproxysock.Command, error) { return haproxysock.AddMap(m, "k", "x <<") }},
		{"empty map value", func() (haproxysock.Command, error) { return haproxysock.AddMap(m, "k", "") }},
		{"map key that is an entry reference", func() (haproxysock.Command, error) { return haproxysock.DelMap(m, "#0x7f00") }},
		{"map path that is a version", func() (haproxysock.Command, error) { return haproxysock.ClearMap("@1") }},
		{"map path with space", func() (haproxysock.Command, error) { return haproxysock.ShowMap("/a b.map") }},
		{"map id not numeric", func() (haproxysock.Command, error) { return haproxysock.ShowMap("#x") }},
		{"negative map version", func() (haproxysock.Command, error) { return haproxysock.CommitMap(-1, m) }},
		{"payload key with space", func() (haproxysock.Command, error) {
			return haproxysock.AddMapPayload(m, []haproxysock.MapEntry{{"a b", "v"}})
		}},
		{"payload value with newline", func() (haproxysock.Command, error) {
			return haproxysock.AddMapPayload(m, []haproxysock.MapEntry{{"a", "v\n\nshow info"}})
		}},
		{"payload value with leading space", func() (haproxysock.Command, error) {
			return haproxysock.AddMapPayload(m, []haproxysock.MapEntry{{"a", " v"}})
		}},
		{"empty payload", func() (haproxysock.Command, error) { return haproxysock.AddMapPayload(m, nil) }},
		{"cert path with semicolon", func() (haproxysock.Command, error) { return haproxysock.NewSSLCert("/a.pem;show info") }},
		{"cert path starting with transaction mark", func() (haproxysock.Command, error) { return haproxysock.CommitSSLCert("*/a.pem") }},
		{"pem with NUL", func() (haproxysock.Command, error) { return haproxysock.SetSSLCert("/a.pem", []byte("a\x00b")) }},
		{"empty pem", func() (haproxysock.Command, error) { return haproxysock.SetSSLCert("/a.pem", []byte("\n\n")) }},
		{"crt-list sni with bracket", func() (haproxysock.Command, error) {
			return haproxysock.AddSSLCrtListEntries("/l", []haproxysock.CrtListEntry{{Cert: "/a.pem", SNI: []string{"]x"}}})
		}},
		{"crt-list option with newline", func() (haproxysock.Command, error) {
			return haproxysock.AddSSLCrtListEntries("/l", []haproxysock.CrtListEntry{{Cert: "/a.pem", Options: []string{"alpn\n"}}})
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := tt.build()
			if !errors.Is(err, haproxysock.ErrInvalidArgument) {
				t.Fatalf("got %q, %v; want ErrInvalidArgument", c.String(), err)
			}
		})
	}
}
