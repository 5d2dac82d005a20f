package rendergate_test

import (
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/haptic-io/haptic/renderplan"
)

// testCore is valid core text with a frontend that routes through a
// relative map path.
const testCore = `global
    maxconn 100

defaults base
    mode http
    timeout connect 1s
    timeout client 1s
    timeout server 1s

frontend fe_http from base
    bind 127.0.0.1:18480
    use_backend %[req.hdr(host),host_only,lower,map(maps/hosts.map)]
    default_backend be_default

backend be_default from base
    http-request return status 404

`

// outputBuilder returns a builder with testCore, one dynamic backend and
// the host map, plus extra core text appended after the core.
func outputBuilder(t testing.TB, extra string) *renderplan.Builder {
	t.Helper()
	b := renderplan.NewBuilder()
	b.Text(testCore + extra)
	must(t, b.Profile("web", []string{"mode http", "balance roundrobin", "timeout connect 1s", "timeout server 1s"}))
	must(t, b.Backend(renderplan.Backend{Name: "be_app", GUID: "be_app", Profile: "web", Servers: []renderplan.Server{
		{Name: "app-0", Address: "127.0.0.1", Port: 18481, Weight: 1},
		{Name: "app-1", Address: "127.0.0.2", Port: 18481, Weight: 1},
	}}))
	must(t, b.Map(renderplan.Map{Path: "maps/hosts.map", Entries: []renderplan.MapEntry{{Key: "app.example.com", Value: "be_app"}}}))
	return b
}

// validOutput is a tree `haproxy -c` accepts on every series.
func validOutput(t testing.TB) *renderplan.Output { return build(t, outputBuilder(t, "")) }

// textOutput is an output whose haproxy.cfg is text, nothing else.
func textOutput(t testing.TB, text string) *renderplan.Output {
	t.Helper()
	b := renderplan.NewBuilder()
	b.Text(text)
	return build(t, b)
}

// planOutput is a small output with a distinct plan per n, for tests of
// the gate machinery that never look at the files.
func planOutput(t testing.TB, n int) *renderplan.Output {
	t.Helper()
	return textOutput(t, fmt.Sprintf("global\n    maxconn %d\n", 100+n))
}

func build(t testing.TB, b *renderplan.Builder) *renderplan.Output {
	t.Helper()
	out, err := b.Build()
	if err != nil {
		t.Fatalf("build output: %v", err)
	}
	return out
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// withConfig returns a copy of out whose haproxy.cfg has old replaced by new.
func withConfig(t testing.TB, out *renderplan.Output, old, new string) *renderplan.Output {
	t.Helper()
	cp := &renderplan.Output{Plan: out.Plan, Files: append([]renderplan.FileContent(nil), out.Files...)}
	for i, f := range cp.Files {
		if f.Path == renderplan.ConfigPath {
			if !strings.Contains(string(f.Body), old) {
				t.Fatalf("no %q in haproxy.cfg", old)
			}
			cp.Files[i].Body = []byte(strings.Replace(string(f.Body), old, new, 1))
		}
	}
	return cp
}

// withoutFile returns a copy of out without the file at path.
func withoutFile(out *renderplan.Output, path string) *renderplan.Output {
	cp := &renderplan.Output{Plan: out.Plan}
	for _, f := range out.Files {
		if f.Path != path {
			cp.Files = append(cp.Files, f)
		}
	}
	return cp
}

// testLogger writes through t.Log.
func testLogger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(tWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type tWriter struct{ t testing.TB }

func (w tWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
