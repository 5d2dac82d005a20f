package kubelet

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// logWriter appends each complete line written to it to a file as
// "<RFC3339Nano timestamp> <line>\n", like the CRI log format without the
// stream tag. Safe for concurrent use (stdout and stderr share one).
type logWriter struct {
	now func() time.Time
	mu  sync.Mutex // guards f, buf
	f   io.Writer
	buf []byte // partial line
}

func (w *logWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			break
		}
		line := w.buf[:i]
		if _, err := fmt.Fprintf(w.f, "%s %s\n", w.now().UTC().Format(time.RFC3339Nano), line); err != nil {
			return 0, err
		}
		w.buf = w.buf[i+1:]
	}
	return len(p), nil
}

// flushLocked writes a trailing partial line; call with mu held.
func (w *logWriter) flushLocked() {
	if len(w.buf) > 0 {
		_, _ = fmt.Fprintf(w.f, "%s %s\n", w.now().UTC().Format(time.RFC3339Nano), w.buf)
		w.buf = nil
	}
}

func (w *logWriter) flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.flushLocked()
}

// logQuery is the subset of the kubelet's container log options we honour.
type logQuery struct {
	since      time.Time // zero: no bound
	tailLines  int       // <0: all
	timestamps bool
}

func parseLogQuery(q map[string][]string, now time.Time) (logQuery, error) {
	get := func(k string) string {
		if v := q[k]; len(v) > 0 {
			return v[0]
		}
		return ""
	}
	lq := logQuery{tailLines: -1}
	if s := get("sinceTime"); s != "" {
		t, err := time.Parse(time.RFC3339, s)
		if err != nil {
			return lq, fmt.Errorf("sinceTime: %w", err)
		}
		lq.since = t
	}
	if s := get("sinceSeconds"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			return lq, fmt.Errorf("sinceSeconds: %q is not a non-negative integer", s)
		}
		lq.since = now.Add(-time.Duration(n) * time.Second)
	}
	if s := get("tailLines"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			return lq, fmt.Errorf("tailLines: %q is not a non-negative integer", s)
		}
		lq.tailLines = n
	}
	lq.timestamps = get("timestamps") == "true"
	return lq, nil
}

// filterLog renders stored log lines for a query. It does no I/O.
func filterLog(r io.Reader, q logQuery) ([]byte, error) {
	var lines []string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		ts, text, ok := strings.Cut(sc.Text(), " ")
		if !ok {
			continue
		}
		if !q.since.IsZero() {
			t, err := time.Parse(time.RFC3339Nano, ts)
			if err != nil || t.Before(q.since) {
				continue
			}
		}
		if q.timestamps {
			lines = append(lines, ts+" "+text)
		} else {
			lines = append(lines, text)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if q.tailLines >= 0 && len(lines) > q.tailLines {
		lines = lines[len(lines)-q.tailLines:]
	}
	var b bytes.Buffer
	for _, l := range lines {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return b.Bytes(), nil
}

// logsHandler serves GET /containerLogs/{namespace}/{pod}/{container};
// path returns the container's log file.
func logsHandler(path func(ns, pod, container string) (string, bool), now func() time.Time) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /containerLogs/{ns}/{pod}/{container}", func(w http.ResponseWriter, r *http.Request) {
		p, ok := path(r.PathValue("ns"), r.PathValue("pod"), r.PathValue("container"))
		if !ok {
			http.Error(w, "container not found", http.StatusNotFound)
			return
		}
		q, err := parseLogQuery(r.URL.Query(), now())
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		f, err := os.Open(p)
		if err != nil {
			http.Error(w, err.Error(), http.StatusNotFound)
			return
		}
		defer f.Close()
		body, err := filterLog(f, q)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write(body)
	})
	return mux
}
