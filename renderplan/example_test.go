package renderplan_test

import (
	"fmt"
	"log"

	"github.com/haptic-io/haptic/renderplan"
)

// A platform team builds a plan in Go, without templates: core text, a
// profile, two dynamic backends reached only through a host map.
func ExampleBuilder() {
	b := renderplan.NewBuilder()
	b.Text(`global
    maxconn 1000

defaults base
    mode http
    timeout connect 5s
    timeout client 30s
    timeout server 30s

frontend fe_http from base
    bind 127.0.0.1:8080
    use_backend %[req.hdr(host),host_only,lower,map(maps/hosts.map)]

`)
	if err := b.Profile("web", []string{"mode http", "balance roundrobin", "timeout connect 5s", "timeout server 30s"}); err != nil {
		log.Fatal(err)
	}
	for _, be := range []renderplan.Backend{
		{Name: "be_shop", GUID: "be_shop", Profile: "web", Servers: []renderplan.Server{
			{Name: "shop-7d9f-x2k4p", Address: "10.0.0.12", Port: 8080, Weight: 1},
			{Name: "shop-7d9f-a8b1c", Address: "10.0.0.11", Port: 8080, Weight: 1, Check: true},
		}},
		{Name: "be_blog", GUID: "be_blog", Profile: "web", Servers: []renderplan.Server{
			{Name: "blog-0", Address: "2001:db8::7", Port: 80, Weight: renderplan.DefaultWeight},
		}},
	} {
		if err := b.Backend(be); err != nil {
			log.Fatal(err)
		}
	}
	if err := b.Map(renderplan.Map{Path: "maps/hosts.map", Entries: []renderplan.MapEntry{
		{Key: "shop.example.com", Value: "be_shop"},
		{Key: "blog.example.com", Value: "be_blog"},
	}}); err != nil {
		log.Fatal(err)
	}
	out, err := b.Build()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("plan ID length:", len(out.ID()))
	for _, f := range out.Files {
		fmt.Printf("--- %s (%s)\n%s", f.Path, f.Kind, f.Body)
	}
	// Output:
	// plan ID length: 16
	// --- haproxy.cfg (config)
	// global
	//     maxconn 1000
	//
	// defaults base
	//     mode http
	//     timeout connect 5s
	//     timeout client 30s
	//     timeout server 30s
	//
	// frontend fe_http from base
	//     bind 127.0.0.1:8080
	//     use_backend %[req.hdr(host),host_only,lower,map(maps/hosts.map)]
	//
	// defaults web
	//     mode http
	//     balance roundrobin
	//     timeout connect 5s
	//     timeout server 30s
	//
	// backend be_shop from web
	//     guid be_shop
	//     server shop-7d9f-a8b1c 10.0.0.11:8080 weight 1 check
	//     server shop-7d9f-x2k4p 10.0.0.12:8080 weight 1
	//
	// backend be_blog from web
	//     guid be_blog
	//     server blog-0 [2001:db8::7]:80 weight 1
	//
	// --- maps/hosts.map (map)
	// blog.example.com be_blog
	// shop.example.com be_shop
}

// The template assembler hands NewOutput the rendered pieces in file order:
// core text between tokens, one piece per profile (ProfileText) and one
// per backend (rendered by NewOutput with BackendText).
func ExampleNewOutput() {
	lines := []string{"mode http", "balance roundrobin", "timeout connect 5s", "timeout server 30s"}
	profile := renderplan.ProfileName("http", lines)
	pieces := []renderplan.Piece{
		{Kind: renderplan.SectionCore, Text: "global\n    maxconn 1000\n\n"},
		{Kind: renderplan.SectionProfile, Name: profile, Text: renderplan.ProfileText(profile, lines)},
		{Kind: renderplan.SectionBackend, Name: "be_default_echo_http"},
		{Kind: renderplan.SectionCore, Text: "# end\n"},
	}
	backends := []renderplan.Backend{{
		Name: "be_default_echo_http", GUID: "haptic-be_default_echo_http", Profile: profile,
		Servers: []renderplan.Server{{Name: "echo-6f7c9d-kx2vq", Address: "10.244.1.7", Port: 8080, Weight: renderplan.DefaultWeight}},
	}}
	out, err := renderplan.NewOutput(pieces, []renderplan.Profile{{Name: profile, Mode: "http"}}, backends, nil, nil)
	if err != nil {
		log.Fatal(err)
	}
	for _, s := range out.Plan.Sections {
		fmt.Printf("%-7s %-22s offset %3d length %3d\n", s.Kind, s.Name, s.Offset, s.Length)
	}
	be, _ := out.Plan.Backend("be_default_echo_http")
	fmt.Println(be.Shape, be.Mode)
	// Output:
	// core                           offset   0 length  25
	// profile haptic-be-539f270937ee offset  25 length 116
	// backend be_default_echo_http   offset 141 length 149
	// core                           offset 290 length   6
	// dynamic http
}

// A controller keeps one Cache and builds every render's output with
// it. A route add passes one more backend; the others come back in the
// same slices, and the cache reuses what it derived from them. The output
// is the one NewOutput builds.
func ExampleCache() {
	lines := []string{"mode http"}
	profile := renderplan.ProfileName("http", lines)
	profiles := []renderplan.Profile{{Name: profile, Mode: "http"}}
	backend := func(name, addr string) renderplan.Backend {
		return renderplan.Backend{Name: name, GUID: "haptic-" + name, Profile: profile,
			Servers: []renderplan.Server{{Name: name + "-0", Address: addr, Port: 8080, Weight: renderplan.DefaultWeight}}}
	}
	piecesFor := func(backends []renderplan.Backend) []renderplan.Piece {
		pieces := []renderplan.Piece{{Kind: renderplan.SectionProfile, Name: profile, Text: renderplan.ProfileText(profile, lines)}}
		for _, be := range backends {
			pieces = append(pieces, renderplan.Piece{Kind: renderplan.SectionBackend, Name: be.Name})
		}
		return pieces
	}

	var cache renderplan.Cache
	backends := []renderplan.Backend{backend("be_a", "10.0.0.1")}
	if _, err := cache.NewOutput(piecesFor(backends), profiles, backends, nil, nil); err != nil {
		log.Fatal(err)
	}
	backends = append(backends, backend("be_b", "10.0.0.2")) // be_a's Servers: the same slice
	out, err := cache.NewOutput(piecesFor(backends), profiles, backends, nil, nil)
	if err != nil {
		log.Fatal(err)
	}
	plain, err := renderplan.NewOutput(piecesFor(backends), profiles, backends, nil, nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(out.Plan.Backends), out.ID() == plain.ID())
	// Output:
	// 2 true
}
