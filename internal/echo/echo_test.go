package echo_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/haptic-io/haptic/internal/echo"
)

func TestServersNameThemselvesInEveryAnswer(t *testing.T) {
	s, err := echo.Start([]string{"127.0.0.1:0", "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	addrs := s.Addrs()
	if len(addrs) != 2 || addrs[0] == addrs[1] {
		t.Fatalf("Addrs() = %v, want two distinct addresses", addrs)
	}
	for _, addr := range addrs {
		req, err := http.NewRequest(http.MethodPost, "http://"+addr+"/p", strings.NewReader("body"))
		if err != nil {
			t.Fatal(err)
		}
		req.Host = "a.test"
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != 200 || resp.Header.Get("X-Echo") != addr || string(b) != "echo "+addr+" POST a.test/p\n" {
			t.Errorf("%s answered %d %q %q", addr, resp.StatusCode, resp.Header.Get("X-Echo"), b)
		}
	}
}

func TestStartOnABusyAddressFailsAndLeavesNothingListening(t *testing.T) {
	s, err := echo.Start([]string{"127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := echo.Start([]string{"127.0.0.1:0", s.Addrs()[0]}); err == nil {
		t.Fatal("Start on a busy address succeeded")
	}
	var none *echo.Servers
	if none.Addrs() != nil {
		t.Error("nil Servers have addresses")
	}
}
