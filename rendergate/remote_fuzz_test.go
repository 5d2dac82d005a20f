package rendergate_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/haptic-io/haptic/rendergate"
)

// FuzzCheckServer feeds the check server arbitrary request bodies and
// lanes: it answers every one with a status of its protocol and, for a
// check it ran, a JSON verdict; it never panics. The haproxy is a script
// that ignores the tree (the fuzzer's trees must not run as code).
func FuzzCheckServer(f *testing.F) {
	dir, err := os.MkdirTemp("", "rendergate-fuzz-")
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { _ = os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		f.Fatal(err)
	}
	bin := filepath.Join(dir, "haproxy")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n[ \"$1\" = -v ] && echo 'HAProxy version 0.0-fake'\nexit 0\n"), 0o755); err != nil {
		f.Fatal(err)
	}
	srv, err := rendergate.NewCheckServer(rendergate.Config{Binary: bin, ScratchDir: dir})
	if err != nil {
		f.Fatal(err)
	}
	f.Add("/v1/check", "gate", []byte(`{"planID":"p","files":[{"Path":"haproxy.cfg","Kind":"config","Body":"Z2xvYmFs"}]}`))
	f.Add("/v1/check", "webhook", []byte(`{"files":[{"Path":"../etc/passwd","Kind":"general","Body":""}]}`))
	f.Add("/v1/check", "", []byte(`{"files":[]}`))
	f.Add("/v1/hold", "gate", []byte(`{"held":false}`))
	f.Add("/v1/check", "Bad Lane", []byte(`{`))
	f.Fuzz(func(t *testing.T, path, lane string, body []byte) {
		if path == "/v1/hold" && bytes.Contains(body, []byte("true")) {
			return // a hold would stall the following inputs' checks
		}
		req := httptest.NewRequest(http.MethodPost, "http://checker/", bytes.NewReader(body))
		req.URL.Path = path
		if lane != "" {
			req.Header.Set("Haptic-Lane", lane)
		}
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		switch rec.Code {
		case http.StatusOK:
			var v map[string]any
			if err := json.Unmarshal(rec.Body.Bytes(), &v); err != nil {
				t.Fatalf("200 with a body that is not JSON: %q", rec.Body.String())
			}
		case http.StatusNoContent, http.StatusBadRequest, http.StatusNotFound, http.StatusServiceUnavailable:
		default:
			t.Fatalf("status %d for %q %q %q", rec.Code, path, lane, body)
		}
	})
}
