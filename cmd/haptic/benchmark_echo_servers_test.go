package main

import (
	"bufio"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/haptic-io/haptic/internal/haproxytest"
	"github.com/haptic-io/haptic/internal/testenv/syncbuf"
)

func TestBenchmarkEchoServersServeUntilStdinEnds(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	t.Cleanup(func() { _ = inW.Close(); _ = outR.Close() })
	var stderr syncbuf.Buffer
	app := newApp(outW, &stderr)
	app.Reader = inR
	done := make(chan error, 1)
	go func() {
		done <- app.Run([]string{"haptic", "benchmark", "echo-servers", "--listen", "127.0.0.1:0"})
		_ = outW.Close()
	}()
	sc := bufio.NewScanner(outR)
	if !sc.Scan() {
		t.Fatalf("no line (stderr %q)", stderr.String())
	}
	var ev struct{ Echo []string }
	if err := json.Unmarshal(sc.Bytes(), &ev); err != nil || len(ev.Echo) != 1 {
		t.Fatalf("line %q (%v), want one address", sc.Text(), err)
	}
	code, body, err := haproxytest.TryGet("http://"+ev.Echo[0]+"/", "a.test")
	if err != nil || code != 200 || !strings.HasPrefix(body, "echo "+ev.Echo[0]) {
		t.Errorf("GET: %d %q %v, want 200 and the echo", code, body, err)
	}
	_ = inW.Close()
	if err := <-done; err != nil {
		t.Errorf("echo-servers: %v", err)
	}
}
