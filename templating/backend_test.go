package templating_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/haptic-io/haptic/renderplan"
	"github.com/haptic-io/haptic/templating"
)

const preamble = `global
    log stdout format raw local0
defaults base
    mode http
`

func TestBackendRecordsADynamicBackendWithSharedProfile(t *testing.T) {
	out, problems := renderTemplate(t, preamble+`
{{- $s := list (dict "name" "pod-b" "address" "10.0.0.2" "port" 80) (dict "name" "pod-a" "address" "10.0.0.1" "port" 80 "weight" 5 "check" true "keywords" (list "inter" "2s")) }}
{{ backend (dict "name" "be_one" "balance" "roundrobin" "timeouts" (dict "server" "30s" "connect" "5s") "options" (list "forwardfor") "defaultServer" "maxconn 100" "servers" $s) }}
{{ backend (dict "name" "be_two" "balance" "roundrobin" "timeouts" (dict "connect" "5s" "server" "30s") "options" (list "forwardfor") "defaultServer" "maxconn 100") }}
frontend fe from base
    bind 127.0.0.1:8080
`)
	if len(problems) != 0 {
		t.Fatalf("problems: %v", problems)
	}
	lines := []string{"mode http", "balance roundrobin", "timeout connect 5s", "timeout server 30s", "option forwardfor", "default-server maxconn 100"}
	profile := renderplan.ProfileName("http", lines)
	one := renderplan.Backend{
		Name: "be_one", GUID: "haptic:be:be_one", Profile: profile, Mode: "http", Shape: renderplan.ShapeDynamic,
		Servers: []renderplan.Server{
			{Name: "pod-a", Address: "10.0.0.1", Port: 80, Weight: 5, Check: true, Keywords: []string{"inter", "2s"}},
			{Name: "pod-b", Address: "10.0.0.2", Port: 80, Weight: 1},
		},
	}
	two := renderplan.Backend{Name: "be_two", GUID: "haptic:be:be_two", Profile: profile, Mode: "http", Shape: renderplan.ShapeDynamic}
	want := preamble + renderplan.ProfileText(profile, lines) + renderplan.BackendText(one) + renderplan.BackendText(two) +
		"frontend fe from base\n    bind 127.0.0.1:8080\n"
	if diff := cmp.Diff(want, fileBody(t, out, "haproxy.cfg")); diff != "" {
		t.Errorf("haproxy.cfg (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]renderplan.Backend{one, two}, out.Plan.Backends); diff != "" {
		t.Errorf("backends (-want +got):\n%s", diff)
	}
	if len(out.Plan.Profiles) != 1 || out.Plan.Profiles[0].Name != profile {
		t.Errorf("profiles = %+v, want one named %s", out.Plan.Profiles, profile)
	}
}

func TestBackendWithBodyIsStructuralAndKeepsItsGUID(t *testing.T) {
	out, _ := renderTemplate(t, preamble+`{{ backend (dict "name" "be_s" "guid" "my-guid" "mode" "tcp" "body" (list "stick-table type ip size 1m" "stick on src")) }}
`)
	be, ok := out.Plan.Backend("be_s")
	if !ok {
		t.Fatal("backend be_s not in plan")
	}
	want := renderplan.Backend{
		Name: "be_s", GUID: "my-guid", Profile: renderplan.ProfileName("tcp", []string{"mode tcp"}), Mode: "tcp",
		Shape: renderplan.ShapeStructural, ShapeReason: renderplan.ShapeReasonBody,
		Body: []string{"stick-table type ip size 1m", "stick on src"},
	}
	if diff := cmp.Diff(want, *be); diff != "" {
		t.Errorf("backend (-want +got):\n%s", diff)
	}
}

func TestBackendDerivesADigestGUIDForLongNames(t *testing.T) {
	name := strings.Repeat("n", 120)
	out, _ := renderTemplate(t, preamble+`{{ backend (dict "name" "`+name+`") }}
`)
	be, _ := out.Plan.Backend(name)
	if want := "haptic:be:" + string(renderplan.DigestString(name)); be.GUID != want {
		t.Errorf("guid = %q, want %q", be.GUID, want)
	}
}

func TestBackendProfilesComeOnceBeforeTheFirstBackend(t *testing.T) {
	out, _ := renderTemplate(t, preamble+`{{ backend (dict "name" "a" "mode" "tcp") }}
frontend mid from base
    bind 127.0.0.1:8081
{{ backend (dict "name" "b") }}
{{ backend (dict "name" "c") }}
`)
	var kinds []string
	for _, s := range out.Plan.Sections {
		kinds = append(kinds, string(s.Kind)+":"+s.Name)
	}
	pTCP := renderplan.ProfileName("tcp", []string{"mode tcp"})
	pHTTP := renderplan.ProfileName("http", []string{"mode http"})
	profiles := []string{"profile:" + pTCP, "profile:" + pHTTP}
	if pHTTP < pTCP {
		profiles[0], profiles[1] = profiles[1], profiles[0]
	}
	want := append(append([]string{"core:"}, profiles...), "backend:a", "core:", "backend:b", "backend:c")
	if diff := cmp.Diff(want, kinds); diff != "" {
		t.Errorf("sections (-want +got):\n%s", diff)
	}
}

func TestBackendTokenMayBeIndented(t *testing.T) {
	out, _ := renderTemplate(t, preamble+"    {{ backend (dict \"name\" \"a\") }}  \n")
	if got := fileBody(t, out, "haproxy.cfg"); !strings.Contains(got, "\nbackend a from ") {
		t.Errorf("haproxy.cfg lacks the backend at line start:\n%s", got)
	}
}

func TestBackendMisuseIsARenderError(t *testing.T) {
	cases := []struct {
		name, tmpl, want string
	}{
		{"unknown key", `{{ backend (dict "name" "a" "balancer" "x") }}`, "unknown key(s) balancer"},
		{"missing name", `{{ backend (dict "mode" "http") }}`, "name: is required"},
		{"bad mode", `{{ backend (dict "name" "a" "mode" "udp") }}`, "must be http or tcp"},
		{"wrong type", `{{ backend (dict "name" "a" "options" "forwardfor") }}`, "options: must be a list of strings"},
		{"duplicate", "{{ backend (dict \"name\" \"a\") }}\n{{ backend (dict \"name\" \"a\") }}", `backend "a" recorded twice`},
		{"unknown server key", `{{ backend (dict "name" "a" "servers" (list (dict "name" "s" "address" "10.0.0.1" "port" 80 "wieght" 2))) }}`, "unknown key(s) wieght"},
		{"server without port", `{{ backend (dict "name" "a" "servers" (list (dict "name" "s" "address" "10.0.0.1"))) }}`, "port: is required"},
		{"servers not a list", `{{ backend (dict "name" "a" "servers" "x") }}`, "must be a list of server dicts"},
		{"token inline", `x {{ backend (dict "name" "a") }}`, "must stand on a line of its own"},
		{"token twice", "{{ $t := backend (dict \"name\" \"a\") }}{{ $t }}\n{{ $t }}", "written twice"},
		{"token dropped", `{{ $t := backend (dict "name" "a") }}`, "never reached haproxy.cfg"},
		{"nul in config", `{{ printf "%c" 0 }}`, "NUL byte"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := renderError(t, preamble+c.tmpl+"\n")
			if !strings.Contains(got, c.want) {
				t.Errorf("error %q does not contain %q", got, c.want)
			}
			if !strings.Contains(got, "haproxy.cfg") {
				t.Errorf("error %q does not name the template", got)
			}
		})
	}
}

func TestBackendBadValuesAreProblemsAndTheRenderGoesOn(t *testing.T) {
	cases := []struct {
		name, tmpl string
		want       templating.Problem
	}{
		{"illegal name", `{{ backend (dict "name" "be x" "object" "Ingress ns/a") }}`,
			templating.Problem{Object: "Ingress ns/a", Reason: templating.ReasonBackendInvalid, Message: `backend "be x": name has invalid character ' ' (allowed: A-Z a-z 0-9 _ . : -)`}},
		{"newline in body", `{{ backend (dict "name" "a" "body" (list "http-request deny\nglobal")) }}`,
			templating.Problem{Object: "backend a", Reason: templating.ReasonBackendInvalid, Message: `backend "a": body line "http-request deny\nglobal" contains a newline, carriage return or NUL`}},
		{"newline in option", `{{ backend (dict "name" "a" "options" (list "x\ny")) }}`,
			templating.Problem{Object: "backend a", Reason: templating.ReasonBackendInvalid, Message: `backend "a": profile line "option x\ny" contains a newline, carriage return or NUL`}},
		{"space in timeout", `{{ backend (dict "name" "a" "timeouts" (dict "server" "1s ;")) }}`,
			templating.Problem{Object: "backend a", Reason: templating.ReasonBackendInvalid, Message: `backend "a": timeout server value "1s ;" contains whitespace`}},
		{"profile-like name", `{{ backend (dict "name" "haptic-be-123") }}`,
			templating.Problem{Object: "backend haptic-be-123", Reason: templating.ReasonBackendInvalid, Message: `backend "haptic-be-123": name starts with "haptic-be-", which is reserved for profiles`}},
		{"guid too long", `{{ backend (dict "name" "a" "guid" (repeat 128 "g")) }}`,
			templating.Problem{Object: "backend a", Reason: templating.ReasonBackendInvalid, Message: `backend "a": guid longer than 127 bytes`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, problems := renderTemplate(t, preamble+c.tmpl+"\n{{ backend (dict \"name\" \"ok\") }}\n")
			if diff := cmp.Diff([]templating.Problem{c.want}, problems); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
			if len(out.Plan.Backends) != 1 || out.Plan.Backends[0].Name != "ok" {
				t.Errorf("backends = %+v, want only ok", out.Plan.Backends)
			}
		})
	}
}

func TestBackendDropsBadServersOnly(t *testing.T) {
	out, problems := renderTemplate(t, preamble+`{{ backend (dict "name" "a" "servers" (list
  (dict "name" "ok" "address" "10.0.0.1" "port" 80)
  (dict "name" "bad;name" "address" "10.0.0.2" "port" 80)
  (dict "name" "host" "address" "example.com" "port" 80)
  (dict "name" "port0" "address" "10.0.0.3" "port" 0)
  (dict "name" "heavy" "address" "10.0.0.4" "port" 80 "weight" 300)
  (dict "name" "kw" "address" "10.0.0.5" "port" 80 "keywords" (list "ssl verify"))
  (dict "name" "kw2" "address" "10.0.0.6" "port" 80 "keywords" (list "weight" "3"))
  (dict "name" "v6" "address" "2001:0db8::1" "port" 80)
  (dict "name" "ok" "address" "10.0.0.7" "port" 80))) }}
`)
	be, _ := out.Plan.Backend("a")
	if len(be.Servers) != 1 || be.Servers[0].Name != "ok" || be.Servers[0].Address != "10.0.0.1" {
		t.Errorf("servers = %+v, want only the first ok", be.Servers)
	}
	var msgs []string
	for _, p := range problems {
		if p.Reason != templating.ReasonServerInvalid {
			t.Errorf("problem %v has reason %s", p, p.Reason)
		}
		msgs = append(msgs, p.Message)
	}
	want := []string{
		`backend "a": server "bad;name": name has invalid character ';' (allowed: A-Z a-z 0-9 _ . : -)`,
		`backend "a": server "heavy": weight 300 out of range 0-256`,
		`backend "a": server "host": address "example.com" is not an IP address`,
		`backend "a": server "kw": keyword "ssl verify" contains whitespace`,
		`backend "a": server "kw2": keyword "weight" must be set through the server's field`,
		`backend "a": server "ok": name used twice`,
		`backend "a": server "port0": port 0 out of range 1-65535`,
		`backend "a": server "v6": address "2001:0db8::1" is not in canonical form "2001:db8::1"`,
	}
	if diff := cmp.Diff(want, msgs); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
}

func TestBackendGUIDsAreUniqueFirstComerWins(t *testing.T) {
	out, problems := renderTemplate(t, preamble+`{{ backend (dict "name" "a" "guid" "haptic:be:b") }}
{{ backend (dict "name" "b") }}
`)
	want := []templating.Problem{{Object: "backend b", Reason: templating.ReasonBackendInvalid, Message: `backend "b": guid "haptic:be:b" already used by backend "a"`}}
	if diff := cmp.Diff(want, problems); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
	if len(out.Plan.Backends) != 1 || out.Plan.Backends[0].Name != "a" {
		t.Errorf("backends = %+v, want only a", out.Plan.Backends)
	}
}

func TestBackendAcceptsTypedServerLists(t *testing.T) {
	cfg := configWith(t, preamble+`{{ backend (dict "name" "a" "servers" .extraContext.typed) }}
{{ backend (dict "name" "b" "servers" .extraContext.dicts) }}
`, "")
	want := []renderplan.Server{{Name: "s", Address: "10.0.0.1", Port: 80, Weight: 2}}
	cfg.ExtraContext = map[string]any{
		"typed": want,
		"dicts": []map[string]any{{"name": "s", "address": "10.0.0.1", "port": int64(80), "weight": 2.0}},
	}
	out, problems, err := renderConfig(t, cfg)
	if err != nil || len(problems) > 0 {
		t.Fatalf("render: %v %v", err, problems)
	}
	for _, be := range []string{"a", "b"} {
		if diff := cmp.Diff(want, serversOf(t, out, be)); diff != "" {
			t.Errorf("backend %s servers (-want +got):\n%s", be, diff)
		}
	}
}

func TestBackendMergesSeveralDictsLaterKeysWinning(t *testing.T) {
	out, problems := renderTemplate(t, preamble+`{{- $shared := dict "mode" "http" "balance" "source" "name" "overridden" }}
{{ backend $shared (dict "name" "a") }}
{{ backend $shared (dict "name" "b" "balance" "roundrobin") }}
{{ backend $shared (dict "name" "c") (dict "balance" "leastconn") }}
`)
	if len(problems) != 0 {
		t.Fatalf("problems: %v", problems)
	}
	balance := map[string]string{}
	for _, be := range out.Plan.Backends {
		for _, p := range out.Plan.Profiles {
			if p.Name == be.Profile {
				cfg := string(out.Files[0].Body)
				i := strings.Index(cfg, "defaults "+p.Name+"\n")
				rest := cfg[i:]
				j := strings.Index(rest, "balance ")
				balance[be.Name] = rest[j+len("balance ") : j+strings.IndexByte(rest[j:], '\n')]
			}
		}
	}
	want := map[string]string{"a": "source", "b": "roundrobin", "c": "leastconn"}
	if diff := cmp.Diff(want, balance); diff != "" {
		t.Errorf("balance by backend (-want +got):\n%s", diff)
	}
	if !strings.Contains(renderError(t, preamble+`{{ backend (dict "name" "a") (dict "bogus" "b") }}`), "bogus") {
		t.Errorf("an unknown key in a later dict is not reported")
	}
}

func TestBackendDroppedForAProblemLeavesNoProfile(t *testing.T) {
	out, problems := renderTemplate(t, preamble+`{{ backend (dict "name" "a" "balance" "source" "body" (list "x\ny")) }}
{{ backend (dict "name" "b" "balance" "source" "body" (list "x\ny")) }}
{{ backend (dict "name" "ok") }}
`)
	if len(problems) != 2 {
		t.Errorf("problems = %v, want two body-line problems", problems)
	}
	if len(out.Plan.Profiles) != 1 || strings.Count(string(out.Files[0].Body), "balance source") != 0 {
		t.Errorf("profiles = %+v, want only the one of backend ok", out.Plan.Profiles)
	}
}
