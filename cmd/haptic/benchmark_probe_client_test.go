package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestBenchmarkProbeClientPollsEachHostOfStdinUntilIts200(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Host != "up.test" {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write([]byte("ok"))
	}))
	t.Cleanup(ts.Close)
	var stdout, stderr bytes.Buffer
	app := newApp(&stdout, &stderr)
	app.Reader = strings.NewReader("up.test\n\nup.test\n")
	if err := app.Run([]string{"haptic", "benchmark", "probe-client", "--url", ts.URL}); err != nil {
		t.Fatalf("probe-client: %v\n%s", err, stderr.String())
	}
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
		var ev struct {
			Event, Host string
			AtUnixNano  int64 `json:"at_unix_nano"`
			Requests    int
		}
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		if ev.Event == "ok" && (ev.AtUnixNano <= 0 || ev.Requests != 1) {
			t.Errorf("ok line %q: want a time and 1 request", line)
		}
		got = append(got, ev.Event+" "+ev.Host)
	}
	want := []string{"polling up.test", "ok up.test", "polling up.test", "ok up.test"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

func TestBenchmarkChildCommandsAreHiddenFromHelp(t *testing.T) {
	stdout, _, err := run(t, "benchmark", "--help")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout, "propagation") || strings.Contains(stdout, "probe-client") || strings.Contains(stdout, "echo-servers") {
		t.Errorf("benchmark --help should list propagation and neither probe-client nor echo-servers; got:\n%s", stdout)
	}
}
