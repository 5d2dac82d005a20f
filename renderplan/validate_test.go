package renderplan_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/hashicorp/go-multierror"

	"github.com/haptic-io/haptic/renderplan"
)

func TestValidateAcceptsBuiltPlan(t *testing.T) {
	out := fullOutput(t)
	if err := out.Plan.Validate(); err != nil {
		t.Fatalf("Validate() = %v, want nil", err)
	}
}

func TestValidateRejectsNilPlan(t *testing.T) {
	var p *renderplan.Plan
	if err := p.Validate(); err == nil {
		t.Fatal("Validate() of a nil plan = nil, want an error")
	}
}

// TestValidateRules breaks one rule at a time on a valid plan and expects
// the problem named in the error; "good" cases change a field to another
// legal value and expect only the digest mismatch they cause, if any.
func TestValidateRules(t *testing.T) {
	backend := func(p *renderplan.Plan, name string) *renderplan.Backend {
		be, ok := p.Backend(name)
		if !ok {
			t.Fatalf("no backend %s", name)
		}
		return be
	}
	server := func(p *renderplan.Plan, be, srv string) *renderplan.Server {
		s, ok := backend(p, be).Server(srv)
		if !ok {
			t.Fatalf("no server %s/%s", be, srv)
		}
		return s
	}
	hosts := func(p *renderplan.Plan) *renderplan.Map {
		m, ok := p.Map("maps/hosts.map")
		if !ok {
			t.Fatal("no hosts map")
		}
		return m
	}
	file := func(p *renderplan.Plan, path string) *renderplan.File {
		f, ok := p.File(path)
		if !ok {
			t.Fatalf("no file %s", path)
		}
		return f
	}
	// reText re-renders a backend's section digest after a legal change so
	// that only the rule under test can fail.
	reText := func(p *renderplan.Plan, name string) {
		be := backend(p, name)
		for i := range p.Sections {
			if s := &p.Sections[i]; s.Kind == renderplan.SectionBackend && s.Name == name {
				text := renderplan.BackendText(*be)
				delta := len(text) - s.Length
				s.Length, s.Digest = len(text), renderplan.DigestString(text)
				for j := i + 1; j < len(p.Sections); j++ {
					p.Sections[j].Offset += delta
				}
				file(p, renderplan.ConfigPath).Size += delta
			}
		}
	}
	reMap := func(p *renderplan.Plan, path string) {
		m, _ := p.Map(path)
		body := renderplan.MapText(*m)
		f := file(p, path)
		f.Size, f.Digest = len(body), renderplan.DigestOf(body)
	}

	tests := []struct {
		name   string
		change func(p *renderplan.Plan)
		want   string // "" means the changed plan is valid
	}{
		{"schema other than v1", func(p *renderplan.Plan) { p.Schema = "haptic.renderplan/v0" }, `plan: schema "haptic.renderplan/v0"`},
		{"backend name with a space", func(p *renderplan.Plan) { backend(p, "be_app").Name = "be app" }, `backend "be app": name has invalid character ' '`},
		{"backend name with a slash", func(p *renderplan.Plan) { backend(p, "be_app").Name = "be/app" }, `name has invalid character '/'`},
		{"backend name with a quote", func(p *renderplan.Plan) { backend(p, "be_app").Name = `be_app"` }, `name has invalid character '"'`},
		{"backend name empty", func(p *renderplan.Plan) { backend(p, "be_app").Name = "" }, `name is empty`},
		{"backend name with all legal characters", func(p *renderplan.Plan) {
			backend(p, "be_app").Name = "Be.app:1-x_Z"
			p.Sections[3].Name = "Be.app:1-x_Z"
			reText(p, "Be.app:1-x_Z")
			// sorting: "Be..." sorts before "be_default"; be_app was first already
		}, ""},
		{"backends not sorted", func(p *renderplan.Plan) {
			p.Backends[0], p.Backends[1] = p.Backends[1], p.Backends[0]
		}, `backend be_app: not sorted (after "be_default")`},
		{"backend named like a profile", func(p *renderplan.Plan) {
			backend(p, "be_tcp").Name = "web"
			p.Sections[5].Name = "web"
			reText(p, "web")
		}, `backend web: a profile has the same name`},
		{"guid of 127 bytes", func(p *renderplan.Plan) {
			backend(p, "be_app").GUID = strings.Repeat("g", 127)
			reText(p, "be_app")
		}, ""},
		{"guid of 128 bytes", func(p *renderplan.Plan) {
			backend(p, "be_app").GUID = strings.Repeat("g", 128)
			reText(p, "be_app")
		}, `backend be_app: guid longer than 127 bytes`},
		{"guid empty", func(p *renderplan.Plan) { backend(p, "be_app").GUID = "" }, `backend be_app: guid is empty`},
		{"guid with a space", func(p *renderplan.Plan) { backend(p, "be_app").GUID = "a b" }, `backend be_app: guid has invalid character ' '`},
		{"guid shared by two backends", func(p *renderplan.Plan) {
			backend(p, "be_tcp").GUID = "guid-be-app"
			reText(p, "be_tcp")
		}, `backend be_tcp: guid guid-be-app already used by backend be_app`},
		{"guid shared by a backend and a server", func(p *renderplan.Plan) {
			backend(p, "be_tcp").GUID = "guid-app-a"
			reText(p, "be_tcp")
		}, `backend be_tcp: guid guid-app-a already used by backend be_app: server app-a`},
		{"server guid keyword without a value", func(p *renderplan.Plan) {
			server(p, "be_app", "app-a").Keywords = []string{"guid"}
			reText(p, "be_app")
		}, `server app-a: keyword guid without a value`},
		{"profile missing", func(p *renderplan.Plan) { backend(p, "be_app").Profile = "nope" }, `backend be_app: profile "nope" not in plan`},
		{"mode differs from profile", func(p *renderplan.Plan) { backend(p, "be_app").Mode = "tcp" }, `backend be_app: mode "tcp" differs from profile web mode "http"`},
		{"profile mode unknown", func(p *renderplan.Plan) { p.Profiles[0].Mode = "log" }, `profile raw: mode "log" is not http or tcp`},
		{"profile name illegal", func(p *renderplan.Plan) { p.Profiles[0].Name = "r w" }, `profile "r w": name has invalid character`},
		{"dynamic backend with body", func(p *renderplan.Plan) {
			be := backend(p, "be_default")
			be.Shape, be.ShapeReason = renderplan.ShapeDynamic, ""
		}, `backend be_default: dynamic backend has body lines`},
		{"structural backend without reason", func(p *renderplan.Plan) { backend(p, "be_default").ShapeReason = "" }, `backend be_default: structural backend without a shape reason`},
		{"unknown shape", func(p *renderplan.Plan) { backend(p, "be_app").Shape = "static" }, `backend be_app: shape "static" is not dynamic or structural`},
		{"body line with a newline", func(p *renderplan.Plan) {
			backend(p, "be_default").Body = []string{"http-request deny\nbackend evil"}
		}, `backend be_default: body line 1 contains a newline`},
		{"body line empty", func(p *renderplan.Plan) { backend(p, "be_default").Body = []string{"  "} }, `body line 1 is empty`},
		{"server name with a slash", func(p *renderplan.Plan) { server(p, "be_app", "app-a").Name = "app/a" }, `backend be_app: server "app/a": name has invalid character '/'`},
		{"server names twice in a backend", func(p *renderplan.Plan) { server(p, "be_app", "app-b").Name = "app-a" }, `backend be_app: server app-a: appears twice`},
		{"same server name in two backends", func(p *renderplan.Plan) {
			server(p, "be_tcp", "db-0").Name = "app-a"
			reText(p, "be_tcp")
		}, ""},
		{"server address a host name", func(p *renderplan.Plan) { server(p, "be_app", "app-a").Address = "app.local" }, `server app-a: address "app.local" is not an IP address`},
		{"server address not canonical", func(p *renderplan.Plan) { server(p, "be_tcp", "db-0").Address = "0:0::1" }, `address "0:0::1" is not in canonical form "::1"`},
		{"server address with a zone", func(p *renderplan.Plan) { server(p, "be_tcp", "db-0").Address = "fe80::1%eth0" }, `address "fe80::1%eth0" has a zone`},
		{"server port 0", func(p *renderplan.Plan) { server(p, "be_app", "app-a").Port = 0 }, `server app-a: port 0 out of range 1-65535`},
		{"server port 65536", func(p *renderplan.Plan) { server(p, "be_app", "app-a").Port = 65536 }, `port 65536 out of range`},
		{"server port 65535", func(p *renderplan.Plan) {
			server(p, "be_app", "app-a").Port = 65535
			reText(p, "be_app")
		}, ""},
		{"server weight 256", func(p *renderplan.Plan) {
			server(p, "be_app", "app-a").Weight = 256
			reText(p, "be_app")
		}, ""},
		{"server weight 257", func(p *renderplan.Plan) { server(p, "be_app", "app-a").Weight = 257 }, `server app-a: weight 257 out of range 0-256`},
		{"server weight negative", func(p *renderplan.Plan) { server(p, "be_app", "app-a").Weight = -1 }, `weight -1 out of range`},
		{"keyword empty", func(p *renderplan.Plan) { server(p, "be_app", "app-a").Keywords = []string{""} }, `server app-a: keyword 1 "" is empty`},
		{"keyword with a space", func(p *renderplan.Plan) {
			server(p, "be_app", "app-a").Keywords = []string{"sni str(a b)"}
		}, `keyword 1 "sni str(a b)" contains whitespace`},
		{"keyword with a newline", func(p *renderplan.Plan) { server(p, "be_app", "app-a").Keywords = []string{"x\ny"} }, `contains whitespace`},
		{"keyword with NUL", func(p *renderplan.Plan) { server(p, "be_app", "app-a").Keywords = []string{"x\x00"} }, `contains a control character`},
		{"keyword with a hash", func(p *renderplan.Plan) { server(p, "be_app", "app-a").Keywords = []string{"#x"} }, `contains '#'`},
		{"keyword with a quote", func(p *renderplan.Plan) { server(p, "be_app", "app-a").Keywords = []string{`"x`} }, `contains '"'`},
		{"keyword weight", func(p *renderplan.Plan) { server(p, "be_app", "app-a").Keywords = []string{"weight", "3"} }, `keyword "weight" is set through the server's field`},
		{"file path absolute", func(p *renderplan.Plan) { file(p, "certs/site.pem").Path = "/certs/site.pem" }, `file "/certs/site.pem": path is absolute`},
		{"file path with dot dot", func(p *renderplan.Plan) { file(p, "certs/site.pem").Path = "../site.pem" }, `path has a ".." element`},
		{"file path not clean", func(p *renderplan.Plan) { file(p, "certs/site.pem").Path = "certs//site.pem" }, `path is not clean (want "certs/site.pem")`},
		{"file path through dot dot", func(p *renderplan.Plan) { file(p, "certs/site.pem").Path = "certs/../site.pem" }, `path has a ".." element`},
		{"file path with NUL", func(p *renderplan.Plan) { file(p, "certs/site.pem").Path = "certs/s\x00" }, `path contains whitespace or a control character`},
		{"file path empty", func(p *renderplan.Plan) { p.Files[0].Path = "" }, `path is empty`},
		{"file kind unknown", func(p *renderplan.Plan) { file(p, "certs/site.pem").Kind = "key" }, `file certs/site.pem: kind "key" is unknown`},
		{"file digest malformed", func(p *renderplan.Plan) { file(p, "certs/site.pem").Digest = "XYZ" }, `file certs/site.pem: digest "XYZ"`},
		{"files twice", func(p *renderplan.Plan) { p.Files = append(p.Files, p.Files[len(p.Files)-1]) }, `file maps/paths.map: appears twice`},
		{"config file missing", func(p *renderplan.Plan) { file(p, renderplan.ConfigPath).Path = "haproxy2.cfg" }, `kind config is only for haproxy.cfg`},
		{"config without reload", func(p *renderplan.Plan) { file(p, renderplan.ConfigPath).ReloadOnChange = false }, `file haproxy.cfg: does not reload on change`},
		{"map without file", func(p *renderplan.Plan) { file(p, "maps/hosts.map").Kind = renderplan.FileGeneral }, `map maps/hosts.map: file at its path has kind "general", want map`},
		{"map file without map", func(p *renderplan.Plan) { file(p, "certs/site.pem").Kind = renderplan.FileMap }, `file certs/site.pem: map file without a map`},
		{"map file digest stale", func(p *renderplan.Plan) { hosts(p).Entries[0].Value = "be_default" }, `map maps/hosts.map: file digest or size does not match the entries`},
		{"map key with a space", func(p *renderplan.Plan) {
			hosts(p).Entries[0].Key = "a b"
			reMap(p, "maps/hosts.map")
		}, `map maps/hosts.map: entry 1: key "a b" contains whitespace`},
		{"map key with a newline", func(p *renderplan.Plan) { hosts(p).Entries[0].Key = "a\nb" }, `contains whitespace or a control character`},
		{"map key starting with hash", func(p *renderplan.Plan) { hosts(p).Entries[0].Key = "#a" }, `starts with '#'`},
		{"map value with a newline", func(p *renderplan.Plan) { hosts(p).Entries[0].Value = "be_app\nevil be_x" }, `value "be_app\nevil be_x" contains a newline`},
		{"map value with NUL", func(p *renderplan.Plan) { hosts(p).Entries[0].Value = "a\x00" }, `contains a newline or another control character`},
		{"map value with inner space and tab", func(p *renderplan.Plan) {
			hosts(p).Entries[0].Value = "be app\tx"
			reMap(p, "maps/hosts.map")
		}, ""},
		{"map value with trailing space", func(p *renderplan.Plan) { hosts(p).Entries[0].Value = "be_app " }, `starts or ends with a space or tab`},
		{"map value empty", func(p *renderplan.Plan) { hosts(p).Entries[0].Value = "" }, `value "" is empty`},
		{"unordered map not sorted", func(p *renderplan.Plan) {
			m := hosts(p)
			m.Entries[0], m.Entries[1] = m.Entries[1], m.Entries[0]
			reMap(p, "maps/hosts.map")
		}, `map maps/hosts.map: entry 2: unordered map entries not sorted by key`},
		{"unordered map key twice", func(p *renderplan.Plan) {
			hosts(p).Entries[1].Key = hosts(p).Entries[0].Key
			reMap(p, "maps/hosts.map")
		}, `key "a.example.com" appears twice in an unordered map`},
		{"ordered map key twice", func(p *renderplan.Plan) {
			m, _ := p.Map("maps/paths.map")
			m.Entries[1].Key = m.Entries[0].Key
			reMap(p, "maps/paths.map")
		}, ""},
		{"map path absolute", func(p *renderplan.Plan) { hosts(p).Path = "/maps/hosts.map" }, `map "/maps/hosts.map": path is absolute`},
		{"sections not contiguous", func(p *renderplan.Plan) { p.Sections[2].Offset++ }, `section 3 (profile raw): offset`},
		{"sections short of the file", func(p *renderplan.Plan) { p.Sections = p.Sections[:len(p.Sections)-1] }, `plan: sections cover`},
		{"section empty", func(p *renderplan.Plan) {
			p.Sections = append(p.Sections, renderplan.Section{Kind: renderplan.SectionCore, Offset: file(p, renderplan.ConfigPath).Size, Digest: renderplan.DigestString("")})
		}, `length 0 is not positive`},
		{"core section with a name", func(p *renderplan.Plan) { p.Sections[0].Name = "x" }, `core section has a name`},
		{"section kind unknown", func(p *renderplan.Plan) { p.Sections[0].Kind = "frontend" }, `kind "frontend" is unknown`},
		{"profile without section", func(p *renderplan.Plan) { p.Sections[1].Kind = renderplan.SectionCore; p.Sections[1].Name = "" }, `profile web: no section`},
		{"profile digest differs from its section", func(p *renderplan.Plan) { p.Profiles[1].Digest = renderplan.DigestString("x") }, `profile web: section digest`},
		{"backend section stale", func(p *renderplan.Plan) { server(p, "be_app", "app-a").Weight = 2 }, `backend be_app: section is not BackendText of the backend`},
		{"backend without section", func(p *renderplan.Plan) { p.Sections[3].Kind = renderplan.SectionCore; p.Sections[3].Name = "" }, `backend be_app: no section`},
		{"body with invalid UTF-8", func(p *renderplan.Plan) { backend(p, "be_default").Body = []string{"x \xff"} }, `is not valid UTF-8`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := fullOutput(t).Plan.Clone()
			tt.change(p)
			err := p.Validate()
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate() = nil, want an error containing %q", tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Validate() = %v\nwant an error containing %q", err, tt.want)
			}
		})
	}
}

func TestValidateReportsEveryProblem(t *testing.T) {
	p := fullOutput(t).Plan.Clone()
	p.Backends[0].GUID = strings.Repeat("g", 200)
	p.Backends[0].Servers[0].Port = 0
	p.Files[0].Path = "/abs"
	var me *multierror.Error
	if err := p.Validate(); !errors.As(err, &me) {
		t.Fatalf("Validate() = %v, want a *multierror.Error", err)
	}
	for _, want := range []string{"guid longer than 127 bytes", "port 0 out of range", "path is absolute"} {
		found := false
		for _, e := range me.Errors {
			found = found || strings.Contains(e.Error(), want)
		}
		if !found {
			t.Errorf("no problem containing %q in %v", want, me)
		}
	}
}
