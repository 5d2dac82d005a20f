package haproxytest_test

import (
	"fmt"
	"net"
	"net/http"
	"testing"

	"github.com/haptic-io/haptic/internal/haproxytest"
)

func TestEchoAnswersWithItsName(t *testing.T) {
	e := haproxytest.StartEcho(t, "origin-a")
	if e.Addr != fmt.Sprintf("127.0.0.1:%d", e.Port) {
		t.Errorf("Addr = %q, Port = %d: disagree or not loopback", e.Addr, e.Port)
	}
	status, body := haproxytest.Get(t, "http://"+e.Addr+"/any/path", "a.test")
	if status != http.StatusOK || body != "origin-a\n" {
		t.Errorf("GET = %d %q, want 200 \"origin-a\\n\"", status, body)
	}
	resp, err := http.Get("http://" + e.Addr + "/")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if got := resp.Header.Get("X-Echo"); got != "origin-a" {
		t.Errorf("X-Echo = %q, want origin-a", got)
	}
}

func TestEchoIsClosedByCleanup(t *testing.T) {
	var addr string
	t.Run("serve", func(t *testing.T) {
		addr = haproxytest.StartEcho(t, "e").Addr
	})
	if _, _, err := haproxytest.TryGet("http://"+addr+"/", ""); err == nil {
		t.Errorf("echo at %s still answers after cleanup", addr)
	}
}

func TestEchoBehindHAProxyAnswersThroughTheProxy(t *testing.T) {
	e := haproxytest.StartEcho(t, "origin-b")
	port := haproxytest.FreePort(t)
	haproxytest.ForEachSeries(t, func(t *testing.T, series string) {
		haproxytest.Start(t, series, haproxytest.Options{Config: func(string) string {
			return fmt.Sprintf(`defaults
    mode http
    timeout connect 5s
    timeout client 5s
    timeout server 5s

frontend fe
    bind 127.0.0.1:%d
    default_backend be

backend be
    server s1 %s
`, port, e.Addr)
		}})
		status, body := haproxytest.Get(t, fmt.Sprintf("http://127.0.0.1:%d/", port), "b.test")
		if status != http.StatusOK || body != "origin-b\n" {
			t.Errorf("GET through haproxy = %d %q, want 200 \"origin-b\\n\"", status, body)
		}
	})
}

func TestFreePortCanBeBound(t *testing.T) {
	port := haproxytest.FreePort(t)
	if port <= 0 || port > 65535 {
		t.Fatalf("FreePort = %d", port)
	}
	l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		t.Fatalf("bind the free port %d: %v", port, err)
	}
	_ = l.Close()
}
