package kubelet

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func stepClock(start time.Time, step time.Duration) func() time.Time {
	t := start
	return func() time.Time { t = t.Add(step); return t }
}

func TestLogWriterTimestampsCompleteLinesAndFlushesTheRest(t *testing.T) {
	var out bytes.Buffer
	w := &logWriter{now: stepClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), time.Second), f: &out}
	_, _ = w.Write([]byte("hel"))
	_, _ = w.Write([]byte("lo\nworld\npart"))
	w.flush()
	want := "2026-01-02T03:04:06Z hello\n2026-01-02T03:04:07Z world\n2026-01-02T03:04:08Z part\n"
	if d := cmp.Diff(want, out.String()); d != "" {
		t.Fatalf("log (-want +got):\n%s", d)
	}
}

func TestFilterLogAppliesSinceTailAndTimestamps(t *testing.T) {
	stored := "2026-01-02T03:04:01Z one\n2026-01-02T03:04:02.5Z two\n2026-01-02T03:04:03Z three\ngarbage\n"
	since := time.Date(2026, 1, 2, 3, 4, 2, 0, time.UTC)
	tests := map[string]struct {
		q    logQuery
		want string
	}{
		"everything":      {logQuery{tailLines: -1}, "one\ntwo\nthree\n"},
		"since":           {logQuery{since: since, tailLines: -1}, "two\nthree\n"},
		"tail":            {logQuery{tailLines: 1}, "three\n"},
		"tail zero":       {logQuery{tailLines: 0}, ""},
		"with timestamps": {logQuery{since: since, tailLines: 1, timestamps: true}, "2026-01-02T03:04:03Z three\n"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := filterLog(strings.NewReader(stored), tc.q)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, string(got)); d != "" {
				t.Fatalf("(-want +got):\n%s", d)
			}
		})
	}
}

func TestParseLogQueryRejectsBadValues(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, q := range []map[string][]string{{"sinceTime": {"yesterday"}}, {"tailLines": {"-1"}}, {"sinceSeconds": {"x"}}} {
		if _, err := parseLogQuery(q, now); err == nil {
			t.Errorf("parseLogQuery(%v) succeeded", q)
		}
	}
	q, err := parseLogQuery(map[string][]string{"sinceSeconds": {"10"}, "timestamps": {"true"}}, now)
	if err != nil || !q.since.Equal(now.Add(-10*time.Second)) || !q.timestamps || q.tailLines != -1 {
		t.Fatalf("parseLogQuery = %+v, %v", q, err)
	}
}

func TestLogsHandlerServesKnownContainersOnly(t *testing.T) {
	p := filepath.Join(t.TempDir(), "c.log")
	if err := os.WriteFile(p, []byte("2026-01-02T03:04:01Z hi\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	h := logsHandler(func(ns, pod, c string) (string, bool) {
		return p, ns == "n" && pod == "p" && c == "c"
	}, time.Now)
	srv := httptest.NewServer(h)
	defer srv.Close()
	get := func(path string) (int, string) {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get("/containerLogs/n/p/c?timestamps=true"); code != 200 || body != "2026-01-02T03:04:01Z hi\n" {
		t.Errorf("known container: %d %q", code, body)
	}
	if code, _ := get("/containerLogs/n/p/other"); code != http.StatusNotFound {
		t.Errorf("unknown container: %d, want 404", code)
	}
	if code, _ := get("/containerLogs/n/p/c?tailLines=x"); code != http.StatusBadRequest {
		t.Errorf("bad query: %d, want 400", code)
	}
}
