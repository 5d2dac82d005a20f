package renderplan_test

import (
	"fmt"
	"testing"

	"github.com/haptic-io/haptic/renderplan"
)

// fullCore is core text for test plans; it routes through the host map.
const fullCore = `global
    maxconn 1000
    hard-stop-after 10s

defaults base
    mode http
    timeout connect 5s
    timeout client 30s
    timeout server 30s

frontend fe_http from base
    bind 127.0.0.1:18080
    use_backend %[req.hdr(host),host_only,lower,map(maps/hosts.map)]
    default_backend be_default

`

// fullBuilder returns a builder that sets every field of every plan type
// at least once: both shapes, both map kinds, every server flag, keywords
// with a server guid, cert and general files.
func fullBuilder(t testing.TB) *renderplan.Builder {
	t.Helper()
	b := renderplan.NewBuilder()
	b.Text(fullCore)
	must(t, b.Profile("web", []string{"mode http", "balance roundrobin", "timeout connect 5s", "timeout server 30s"}))
	must(t, b.Profile("raw", []string{"mode tcp", "timeout connect 5s", "timeout server 30s"}))
	must(t, b.Backend(renderplan.Backend{
		Name: "be_app", GUID: "guid-be-app", Profile: "web",
		Servers: []renderplan.Server{
			{Name: "app-b", Address: "127.0.0.2", Port: 8080, Weight: 7, Check: true},
			{Name: "app-a", Address: "127.0.0.1", Port: 8080, Weight: 1, Disabled: true,
				Keywords: []string{"inter", "2s", "guid", "guid-app-a"}},
		},
	}))
	must(t, b.Backend(renderplan.Backend{
		Name: "be_default", GUID: "guid-be-default", Profile: "web",
		Body: []string{`http-request return status 404 content-type text/plain string "no route"`},
	}))
	must(t, b.Backend(renderplan.Backend{
		Name: "be_tcp", GUID: "guid-be-tcp", Profile: "raw",
		Servers: []renderplan.Server{{Name: "db-0", Address: "::1", Port: 5432, Weight: 0}},
	}))
	b.Text("# trailing core text\n")
	must(t, b.Map(renderplan.Map{Path: "maps/hosts.map", Entries: []renderplan.MapEntry{
		{Key: "b.example.com", Value: "be_app"},
		{Key: "a.example.com", Value: "be_tcp"},
	}}))
	must(t, b.Map(renderplan.Map{Path: "maps/paths.map", Ordered: true, Entries: []renderplan.MapEntry{
		{Key: "/shop/cart", Value: "be_app"},
		{Key: "/shop", Value: "be app with spaces"},
	}}))
	must(t, b.File("certs/site.pem", renderplan.FileCert, []byte("-----BEGIN CERTIFICATE-----\n"), false))
	must(t, b.File("general/503.http", renderplan.FileGeneral, []byte("HTTP/1.1 503\r\n\r\n"), true))
	return b
}

// fullOutput builds fullBuilder's output.
func fullOutput(t testing.TB) *renderplan.Output {
	t.Helper()
	out, err := fullBuilder(t).Build()
	if err != nil {
		t.Fatalf("build full plan: %v", err)
	}
	return out
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// bigInputs returns NewOutput's arguments for n dynamic backends with two
// servers each, a host map with one entry per backend, and core text.
func bigInputs(n int) ([]renderplan.Piece, []renderplan.Profile, []renderplan.Backend, []renderplan.Map) {
	profLines := []string{"mode http", "balance roundrobin", "timeout connect 5s", "timeout server 30s"}
	prof := renderplan.ProfileName("http", profLines)
	pieces := []renderplan.Piece{
		{Kind: renderplan.SectionCore, Text: fullCore},
		{Kind: renderplan.SectionProfile, Name: prof, Text: renderplan.ProfileText(prof, profLines)},
	}
	backends := make([]renderplan.Backend, n)
	entries := make([]renderplan.MapEntry, n)
	for i := range n {
		name := fmt.Sprintf("be_ns%04d_svc%04d_http", i%97, i)
		backends[i] = renderplan.Backend{
			Name: name, GUID: "haptic-" + name, Profile: prof,
			Servers: []renderplan.Server{
				{Name: fmt.Sprintf("svc%04d-5d8c7b9f4-x%04d", i, i), Address: fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255), Port: 8080, Weight: 1},
				{Name: fmt.Sprintf("svc%04d-5d8c7b9f4-y%04d", i, i), Address: fmt.Sprintf("10.%d.%d.%d", 128+i>>16&127, i>>8&255, i&255), Port: 8080, Weight: 1, Check: true},
			},
		}
		pieces = append(pieces, renderplan.Piece{Kind: renderplan.SectionBackend, Name: name})
		entries[i] = renderplan.MapEntry{Key: fmt.Sprintf("host%05d.example.com", i), Value: name}
	}
	pieces = append(pieces, renderplan.Piece{Kind: renderplan.SectionCore, Text: "backend be_default\n    mode http\n"})
	profiles := []renderplan.Profile{{Name: prof, Mode: "http"}}
	maps := []renderplan.Map{{Path: "maps/hosts.map", Entries: entries}}
	return pieces, profiles, backends, maps
}

// bigOutput builds bigInputs(n) into an output.
func bigOutput(t testing.TB, n int) *renderplan.Output {
	t.Helper()
	pieces, profiles, backends, maps := bigInputs(n)
	out, err := renderplan.NewOutput(pieces, profiles, backends, maps, nil)
	if err != nil {
		t.Fatalf("NewOutput with %d backends: %v", n, err)
	}
	return out
}

func configBody(t testing.TB, out *renderplan.Output) string {
	t.Helper()
	return fileBody(t, out, renderplan.ConfigPath)
}

func fileBody(t testing.TB, out *renderplan.Output, path string) string {
	t.Helper()
	for _, f := range out.Files {
		if f.Path == path {
			return string(f.Body)
		}
	}
	t.Fatalf("no file %s in the output", path)
	return ""
}

func clonePieces(p []renderplan.Piece) []renderplan.Piece {
	return append([]renderplan.Piece(nil), p...)
}

func cloneBackends(bs []renderplan.Backend) []renderplan.Backend {
	out := make([]renderplan.Backend, len(bs))
	for i, be := range bs {
		be.Servers = append([]renderplan.Server(nil), be.Servers...)
		be.Body = append([]string(nil), be.Body...)
		out[i] = be
	}
	return out
}
