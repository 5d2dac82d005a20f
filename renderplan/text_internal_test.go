package renderplan

import (
	"math"
	"strconv"
	"testing"
)

func TestAppendIntWritesWhatStrconvWrites(t *testing.T) {
	ns := []int{math.MinInt, -1e9, -100, -1, 1e9 - 1, 1e9, 1e9 + 1, math.MaxInt}
	for n := range 100000 {
		ns = append(ns, n, n*9973)
	}
	for _, n := range ns {
		if got, want := string(appendInt([]byte("x"), n)), "x"+strconv.Itoa(n); got != want {
			t.Fatalf("appendInt(%d) = %q, want %q", n, got, want)
		}
	}
}

// NewOutput sizes haproxy.cfg with backendTextSize: it must be the exact
// length for valid backends and never less for others.
func TestBackendTextSizeIsTheLengthOfTheSection(t *testing.T) {
	server := func(port, weight int) Server {
		return Server{Name: "s", Address: "10.0.0.1", Port: port, Weight: weight}
	}
	tests := []struct {
		name  string
		be    Backend
		exact bool
	}{
		{"empty", Backend{}, true},
		{"body lines", Backend{Name: "be", GUID: "g", Profile: "p", Body: []string{"a b", "http-request deny"}}, true},
		{"flags and keywords", Backend{Name: "be_x", GUID: "guid-x", Profile: "web", Servers: []Server{
			{Name: "a", Address: "127.0.0.1", Port: 8080, Weight: 7, Disabled: true, Check: true, Keywords: []string{"ssl", "verify", "none"}},
			{Name: "b", Address: "2001:db8::1", Port: 1, Weight: 0, Keywords: []string{}},
			{Name: "c", Address: "::1", Port: 65535, Weight: 256, Check: true},
		}}, true},
		{"largest small numbers", Backend{Servers: []Server{server(999999999, 9), server(10, 100000000)}}, true},
		{"large port", Backend{Servers: []Server{server(1e9, 1)}}, false},
		{"negative weight", Backend{Servers: []Server{server(80, -1)}}, false},
		{"extreme numbers", Backend{Servers: []Server{server(math.MinInt, math.MaxInt)}}, false},
	}
	for n := range 1000 {
		tests = append(tests, struct {
			name  string
			be    Backend
			exact bool
		}{strconv.Itoa(n), Backend{Servers: []Server{server(n*n, n)}}, true})
	}
	for _, tt := range tests {
		got, want := backendTextSize(&tt.be), len(BackendText(tt.be))
		if got < want || tt.exact && got != want {
			t.Errorf("%s: backendTextSize = %d, section has %d bytes", tt.name, got, want)
		}
	}
}
