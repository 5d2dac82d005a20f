package renderplan_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/haptic-io/haptic/renderplan"
)

func TestBuilderBuildsAValidPlanEndToEnd(t *testing.T) {
	out := fullOutput(t)
	if err := out.Plan.Validate(); err != nil {
		t.Fatal(err)
	}
	cfg := configBody(t, out)
	want := fullCore +
		"defaults web\n    mode http\n    balance roundrobin\n    timeout connect 5s\n    timeout server 30s\n\n" +
		"defaults raw\n    mode tcp\n    timeout connect 5s\n    timeout server 30s\n\n" +
		"backend be_app from web\n    guid guid-be-app\n" +
		"    server app-a 127.0.0.1:8080 weight 1 disabled inter 2s guid guid-app-a\n" +
		"    server app-b 127.0.0.2:8080 weight 7 check\n\n" +
		"backend be_default from web\n    guid guid-be-default\n" +
		"    http-request return status 404 content-type text/plain string \"no route\"\n\n" +
		"backend be_tcp from raw\n    guid guid-be-tcp\n    server db-0 [::1]:5432 weight 0\n\n" +
		"# trailing core text\n"
	if diff := cmp.Diff(want, cfg); diff != "" {
		t.Errorf("haproxy.cfg (-want +got):\n%s", diff)
	}
	var kinds []string
	for _, s := range out.Plan.Sections {
		kinds = append(kinds, string(s.Kind)+" "+s.Name)
	}
	wantKinds := []string{"core ", "profile web", "profile raw", "backend be_app", "backend be_default", "backend be_tcp", "core "}
	if diff := cmp.Diff(wantKinds, kinds); diff != "" {
		t.Errorf("sections (-want +got):\n%s", diff)
	}
	// Build twice: same output.
	again, err := fullBuilder(t).Build()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(out, again, cmpopts.IgnoreUnexported(renderplan.Output{})); diff != "" {
		t.Errorf("second build differs (-want +got):\n%s", diff)
	}
}

func TestBuilderReportsMistakes(t *testing.T) {
	tests := []struct {
		name  string
		build func(b *renderplan.Builder) error
		want  string
	}{
		{"profile without mode", func(b *renderplan.Builder) error {
			return b.Profile("p", []string{"balance roundrobin"})
		}, `profile p: no "mode http" or "mode tcp" line`},
		{"profile line with a newline", func(b *renderplan.Builder) error {
			return b.Profile("p", []string{"mode http", "a\nb"})
		}, "contains a newline"},
		{"backend before its profile", func(b *renderplan.Builder) error {
			return b.Backend(renderplan.Backend{Name: "be", GUID: "g", Profile: "later"})
		}, `backend be: profile "later" not added before it`},
		{"config file", func(b *renderplan.Builder) error {
			return b.File("haproxy.cfg", renderplan.FileConfig, nil, true)
		}, `kind "config" cannot be added`},
		{"map file", func(b *renderplan.Builder) error {
			return b.File("m.map", renderplan.FileMap, nil, false)
		}, `kind "map" cannot be added`},
		{"absolute file", func(b *renderplan.Builder) error {
			return b.File("/etc/passwd", renderplan.FileGeneral, nil, true)
		}, "path is absolute"},
		{"bad map path", func(b *renderplan.Builder) error {
			return b.Map(renderplan.Map{Path: "maps/../../x.map"})
		}, `path has a ".." element`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := fullBuilder(t)
			err := tt.build(b)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("call error = %v, want one containing %q", err, tt.want)
			}
			// Build reports it again, even though the caller had it.
			if _, err := b.Build(); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Build() error = %v, want one containing %q", err, tt.want)
			}
		})
	}
}

func TestBuilderValidatesOnBuild(t *testing.T) {
	b := renderplan.NewBuilder()
	b.Text("global")
	must(t, b.Profile("web", []string{"mode http"}))
	must(t, b.Backend(renderplan.Backend{Name: "be a", GUID: strings.Repeat("x", 128), Profile: "web",
		Servers: []renderplan.Server{{Name: "s", Address: "localhost", Port: 80}}}))
	_, err := b.Build()
	if err == nil {
		t.Fatal("Build() of an invalid plan succeeded")
	}
	for _, want := range []string{`backend "be a": name has invalid character ' '`, "guid longer than 127 bytes", `address "localhost" is not an IP address`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Build() error lacks %q:\n%v", want, err)
		}
	}
}

func TestBuilderTextAddsAMissingNewline(t *testing.T) {
	b := renderplan.NewBuilder()
	b.Text("global")
	b.Text("")
	b.Text("    maxconn 10\n")
	out, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	if got := configBody(t, out); got != "global\n    maxconn 10\n" {
		t.Errorf("haproxy.cfg = %q", got)
	}
	if len(out.Plan.Sections) != 1 {
		t.Errorf("%d sections, want 1 merged core section", len(out.Plan.Sections))
	}
}

func TestBuilderCopiesWhatItIsGiven(t *testing.T) {
	b := renderplan.NewBuilder()
	must(t, b.Profile("web", []string{"mode http"}))
	be := renderplan.Backend{Name: "be", GUID: "g", Profile: "web", Servers: []renderplan.Server{{Name: "s", Address: "127.0.0.1", Port: 80, Weight: 1}}}
	must(t, b.Backend(be))
	body := []byte("hello")
	must(t, b.File("general/x", renderplan.FileGeneral, body, true))
	be.Servers[0].Port = 81
	body[0] = 'j'
	out, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	if out.Plan.Backends[0].Servers[0].Port != 80 {
		t.Error("changing the caller's backend after Backend() changed the plan")
	}
	if got := fileBody(t, out, "general/x"); got != "hello" {
		t.Errorf("file body = %q, want hello", got)
	}
}
