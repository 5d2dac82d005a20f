package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/haptic-io/haptic/internal/haproxytest"
	"github.com/haptic-io/haptic/internal/testenv/syncbuf"
)

// runCommands runs an app made of cmds (the subcommands of this file
// work with or without their registration in newApp).
func runCommands(t *testing.T, cmds []*cli.Command, args ...string) (string, string, error) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	app := newApp(&stdout, &stderr)
	app.Commands = cmds
	err := app.Run(append([]string{"haptic"}, args...))
	return stdout.String(), stderr.String(), err
}

func TestBenchmarkPropagationPrintsParseableNumbers(t *testing.T) {
	if testing.Short() {
		t.Skip("runs HAProxy; skipped with -short")
	}
	bin := haproxyForTests(t)
	heapProfile := filepath.Join(t.TempDir(), "heap.prof")
	stdout, stderr, err := runCommands(t, []*cli.Command{benchmarkPropagationCommand()},
		"propagation", "--haproxy", bin, "--routes", "20", "--flips", "4", "--flip-interval", "100ms", "--memprofile", heapProfile)
	if err != nil {
		t.Fatalf("benchmark propagation: %v\n%s\n%s", err, stdout, stderr)
	}
	t.Log("\n" + stdout)
	values := map[string]string{}
	for _, line := range strings.Split(stdout, "\n") {
		if f := strings.Fields(line); len(f) == 2 && regexp.MustCompile(`^[a-z0-9_]+$`).MatchString(f[0]) {
			values[f[0]] = f[1]
		}
	}
	for key, want := range map[string]string{"probe_routes": "20", "probe_poller": "process", "echo_servers": "process", "probe_unexpected_answers": "0", "probe_reloads": "0", "routechange_flips": "4", "routechange_non200": "0"} {
		if values[key] != want {
			t.Errorf("%s = %q, want %q", key, values[key], want)
		}
	}
	for _, key := range []string{"probe_p50_ms", "probe_p99_ms", "probe_max_ms"} {
		if v, err := strconv.ParseFloat(values[key], 64); err != nil || v <= 0 {
			t.Errorf("%s = %q, want a positive number of milliseconds", key, values[key])
		}
	}
	if tenths := regexp.MustCompile(`(?m)^probe_p50_ms_by_tenth( [0-9.]+){10}$`).FindString(stdout); tenths == "" {
		t.Error("no probe_p50_ms_by_tenth line with ten numbers")
	}
	if v, err := strconv.ParseUint(values["probe_alloc_kb_per_route"], 10, 64); err != nil || v == 0 {
		t.Errorf("probe_alloc_kb_per_route = %q, want a positive count", values["probe_alloc_kb_per_route"])
	}
	if _, err := strconv.ParseUint(values["probe_gc_cycles"], 10, 64); err != nil {
		t.Errorf("probe_gc_cycles = %q, want a count", values["probe_gc_cycles"])
	}
	if fi, err := os.Stat(heapProfile); err != nil || fi.Size() == 0 {
		t.Errorf("--memprofile wrote no profile: %v", err)
	}
	if !strings.Contains(stdout, "HAProxy Unified Gateway") {
		t.Error("the references are missing")
	}
}

func TestResolveHAProxyNamesTheInstallScriptForAMissingSeries(t *testing.T) {
	t.Setenv("HAPTIC_CACHE_DIR", t.TempDir())
	_, err := resolveHAProxy("3.9")
	if err == nil || !strings.Contains(err.Error(), "hack/install-haproxy.sh 3.9") {
		t.Errorf("error %v, want one naming hack/install-haproxy.sh 3.9", err)
	}
}

func TestLocalServesTheResourcesAndStopsWhenCancelled(t *testing.T) {
	bin := haproxyForTests(t)
	echo := haproxytest.StartEcho(t, "echo-a")
	dir := t.TempDir()
	manifest := fmt.Sprintf(`apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {namespace: t, name: a}
spec:
  ingressClassName: haptic
  rules: [{host: a.example, http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: a, port: {number: 80}}}}]}}]
---
apiVersion: v1
kind: Service
metadata: {namespace: t, name: a}
spec: {ports: [{port: 80}]}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {namespace: t, name: a-1, labels: {kubernetes.io/service-name: a}}
addressType: IPv4
ports: [{port: %d}]
endpoints: [{addresses: [127.0.0.1], conditions: {ready: true}}]
`, echo.Port)
	if err := os.WriteFile(filepath.Join(dir, "a.yaml"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	listen := fmt.Sprintf("127.0.0.1:%d", haproxytest.FreePort(t))
	var stdout, stderr syncbuf.Buffer
	app := newApp(&stdout, &stderr)
	app.Commands = []*cli.Command{localCommand()}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- app.RunContext(ctx, []string{"haptic", "local", "-r", dir, "--haproxy", bin, "--listen", listen,
			"--stats-listen", fmt.Sprintf("127.0.0.1:%d", haproxytest.FreePort(t)), "--metrics-listen", "",
			"--min-reload-interval", "-1ns"})
	}()
	defer func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("haptic local: %v\n%s", err, stderr.String())
			}
		case <-time.After(30 * time.Second):
			t.Error("haptic local did not stop within 30s of the cancel")
		}
		if c, err := net.DialTimeout("tcp", listen, time.Second); err == nil {
			_ = c.Close()
			t.Errorf("%s still accepts connections: HAProxy was left running", listen)
		}
	}()
	deadline := time.Now().Add(30 * time.Second)
	for {
		code, body, err := haproxytest.TryGet("http://"+listen+"/", "a.example")
		if err == nil && code == 200 && body == "echo-a\n" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a.example never answered 200 from echo-a (last: %d %q %v)\n%s", code, body, err, stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if want := "curl -H 'Host: a.example' http://" + listen + "/"; !strings.Contains(stdout.String(), want) {
		t.Errorf("the banner does not show %q:\n%s", want, stdout.String())
	}
	for !strings.Contains(stderr.String(), "msg=apply ") { // logged after the pod answered
		if time.Now().After(deadline) {
			t.Fatalf("no apply line in the log:\n%s", stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}
