package agentapi_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/haptic-io/haptic/agentapi"
	"github.com/haptic-io/haptic/renderplan"
)

// TestApplyReadDeadlines sends framed applies over a raw connection at
// chosen rates: a request that trickles (a byte every 100 ms) is answered
// 408 once the read timeout passes, wherever it trickles, and a large
// body that arrives slower than the timeout allows alone, but faster than
// the minimum rate, is read in full.
func TestApplyReadDeadlines(t *testing.T) {
	const timeout = 300 * time.Millisecond
	big := strings.Repeat("x", 2<<20)
	cases := []struct {
		name   string
		body   string // the general file's body
		pace   func(part string) []chunk
		status int
	}{
		{"a body a byte at a time", "0123456789", trickleBody, http.StatusRequestTimeout},
		{"a manifest a byte at a time", "0123456789", trickleManifest, http.StatusRequestTimeout},
		{"a stall before the next body line", "0123456789", stallAfterManifest, http.StatusRequestTimeout},
		{"2 MiB at 4 MiB/s", big, steady(256<<10, 60*time.Millisecond), http.StatusOK},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fake := &fakeApplier{result: &agentapi.ApplyResult{PlanID: "p", OK: true}}
			srv := httptest.NewServer(agentapi.NewHandler(fake, agentapi.HandlerOptions{Token: testToken, ReadTimeout: timeout, Log: testLogger(t)}))
			defer srv.Close()
			start := time.Now()
			status, msg := rawApply(t, srv.Listener.Addr().String(), tc.pace(framedWithGeneral(t, tc.body)))
			took := time.Since(start)
			t.Logf("%d after %v: %s", status, took.Round(time.Millisecond), strings.TrimSpace(msg))
			if status != tc.status {
				t.Fatalf("status %d (%s), want %d", status, msg, tc.status)
			}
			if status == http.StatusRequestTimeout && took > 5*timeout {
				t.Errorf("answered after %v, want about %v", took, timeout)
			}
		})
	}
}

// chunk is a piece of a request body and the pause before it.
type chunk struct {
	pause time.Duration
	data  string
}

// framedWithGeneral is a framed apply of haproxy.cfg and general/f with
// body, split into head (through the last body line) and body.
func framedWithGeneral(t *testing.T, body string) string {
	t.Helper()
	cfg := "global\n"
	manifest, err := json.Marshal(&agentapi.ApplyRequest{PlanID: "p", Verdict: agentapi.VerdictFileOnly, Files: []renderplan.File{
		manifestFile(renderplan.ConfigPath, renderplan.FileConfig, cfg),
		manifestFile("general/f", renderplan.FileGeneral, body),
	}})
	if err != nil {
		t.Fatal(err)
	}
	return strconv.Itoa(len(manifest)) + "\n" + string(manifest) + "haproxy.cfg\n" + cfg + "general/f\n" + body
}

func trickleBody(req string) []chunk {
	cut := len(req) - 10
	out := []chunk{{0, req[:cut]}}
	for i := cut; i < len(req); i++ {
		out = append(out, chunk{100 * time.Millisecond, req[i : i+1]})
	}
	return out
}

func trickleManifest(req string) []chunk {
	var out []chunk
	for i := range 10 {
		out = append(out, chunk{100 * time.Millisecond, req[i : i+1]})
	}
	return append(out, chunk{0, req[10:]})
}

func stallAfterManifest(req string) []chunk {
	cut := strings.Index(req, "general/f\n")
	return []chunk{{0, req[:cut]}, {time.Second, req[cut:]}}
}

func steady(size int, pause time.Duration) func(string) []chunk {
	return func(req string) []chunk {
		var out []chunk
		for i := 0; i < len(req); i += size {
			out = append(out, chunk{pause, req[i:min(i+size, len(req))]})
		}
		return out
	}
}

// rawApply posts the chunks as a chunked request on a raw connection and
// returns the answer's status and body; it stops sending when the server
// answers or closes.
func rawApply(t *testing.T, addr string, chunks []chunk) (int, string) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: agent\r\nAuthorization: Bearer %s\r\nContent-Type: %s\r\nTransfer-Encoding: chunked\r\n\r\n",
		agentapi.PathApply, string(testToken), agentapi.ContentTypeApply)
	go func() {
		for _, c := range chunks {
			time.Sleep(c.pause)
			if _, err := fmt.Fprintf(conn, "%x\r\n%s\r\n", len(c.data), c.data); err != nil {
				return
			}
		}
		_, _ = conn.Write([]byte("0\r\n\r\n"))
	}()
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("read the answer: %v", err)
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	_, _ = b.ReadFrom(resp.Body)
	return resp.StatusCode, b.String()
}
