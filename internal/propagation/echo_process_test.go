package propagation_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/haptic-io/haptic/internal/haproxytest"
	"github.com/haptic-io/haptic/internal/propagation"
)

func TestEchoServersAnnounceTheirAddressesAndServeUntilStdinEnds(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	t.Cleanup(func() { _ = inW.Close(); _ = outR.Close() })
	done := make(chan error, 1)
	go func() {
		done <- propagation.RunEchoServers(context.Background(), []string{"127.0.0.1:0", "127.0.0.1:0"}, inR, outW)
		_ = outW.Close()
	}()
	sc := bufio.NewScanner(outR)
	if !sc.Scan() {
		t.Fatalf("no line: %v", sc.Err())
	}
	var ev struct {
		Event string
		Echo  []string
	}
	if err := json.Unmarshal(sc.Bytes(), &ev); err != nil || ev.Event != "listening" || len(ev.Echo) != 2 || ev.Echo[0] == ev.Echo[1] {
		t.Fatalf("line %q (%v), want listening on two addresses", sc.Text(), err)
	}
	for _, addr := range ev.Echo {
		code, body, err := haproxytest.TryGet("http://"+addr+"/x", "a.test")
		if err != nil || code != 200 || !strings.HasPrefix(body, "echo "+addr+" GET a.test/x") {
			t.Errorf("GET %s: %d %q %v, want 200 and its echo", addr, code, body, err)
		}
	}
	_ = inW.Close()
	if err := <-done; err != nil {
		t.Fatalf("after stdin ended: %v", err)
	}
	if _, _, err := haproxytest.TryGet("http://"+ev.Echo[0]+"/", "a.test"); err == nil {
		t.Error("the echo server still answers after stdin ended")
	}
}

func TestEchoServersStopWhenTheirContextEnds(t *testing.T) {
	inR, inW := io.Pipe()
	t.Cleanup(func() { _ = inW.Close() })
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- propagation.RunEchoServers(ctx, []string{"127.0.0.1:0"}, inR, outW) }()
	if !bufio.NewScanner(outR).Scan() {
		t.Fatal("no listening line")
	}
	cancel()
	if err := <-done; err == nil || !strings.Contains(err.Error(), "canceled") {
		t.Errorf("error %v, want context canceled", err)
	}
}

func TestEchoServersNeedAnAddress(t *testing.T) {
	if err := propagation.RunEchoServers(context.Background(), nil, strings.NewReader(""), io.Discard); err == nil {
		t.Error("no error without an address")
	}
}
