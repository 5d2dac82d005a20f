package templating_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/haptic-io/haptic/renderplan"
	"github.com/haptic-io/haptic/templating"
)

func TestRegisterMapReturnsThePathAndMapEntryFillsIt(t *testing.T) {
	out, problems := renderTemplate(t, preamble+`frontend fe from base
    bind 127.0.0.1:8080
    use_backend %[req.hdr(host),lower,map({{ registerMap (dict "name" "hosts.map") }})]
    http-request set-var(txn.p) path,map_beg({{ registerMap (dict "name" "prefix.map" "ordered" true) }})
{{- mapEntry "hosts.map" "b.example.com" "be_b" }}
{{- mapEntry "hosts.map" "a.example.com" "be_a" }}
{{- mapEntry "hosts.map" "a.example.com" "be_a" }}
{{- mapEntry "prefix.map" "/z" "be_z" }}
{{- mapEntry "prefix.map" "/a" 42 }}
`)
	if len(problems) > 0 {
		t.Fatalf("problems: %v", problems)
	}
	if got := fileBody(t, out, "haproxy.cfg"); !contains(got, "map(maps/hosts.map)") || !contains(got, "map_beg(maps/prefix.map)") {
		t.Errorf("haproxy.cfg lacks the map paths:\n%s", got)
	}
	if diff := cmp.Diff("a.example.com be_a\nb.example.com be_b\n", fileBody(t, out, "maps/hosts.map")); diff != "" {
		t.Errorf("unordered map is sorted by key (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff("/z be_z\n/a 42\n", fileBody(t, out, "maps/prefix.map")); diff != "" {
		t.Errorf("ordered map keeps insertion order (-want +got):\n%s", diff)
	}
	m, _ := out.Plan.Map("maps/prefix.map")
	if !m.Ordered {
		t.Error("prefix.map is not ordered in the plan")
	}
}

func TestMapEntryFirstWriteWinsAndConflictsAreProblems(t *testing.T) {
	out, problems := renderTemplate(t, preamble+`{{ $_ := registerMap (dict "name" "hosts.map") }}
{{- mapEntry "hosts.map" "a" "first" "Ingress ns/old" }}
{{- mapEntry "hosts.map" "a" "second" "Ingress ns/new" }}
`)
	if diff := cmp.Diff("a first\n", fileBody(t, out, "maps/hosts.map")); diff != "" {
		t.Errorf("map (-want +got):\n%s", diff)
	}
	want := []templating.Problem{{Object: "Ingress ns/new", Reason: templating.ReasonMapKeyConflict,
		Message: `map hosts.map: key "a" already maps to "first"; "second" ignored`}}
	if diff := cmp.Diff(want, problems); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
}

func TestMapEntryRefusesHostileKeysAndValues(t *testing.T) {
	out, problems := renderTemplate(t, preamble+`{{ $_ := registerMap (dict "name" "hosts.map") }}
{{- mapEntry "hosts.map" "evil.com\nother.com" "be_x" }}
{{- mapEntry "hosts.map" "a b" "be_x" }}
{{- mapEntry "hosts.map" "#comment" "be_x" }}
{{- mapEntry "hosts.map" "" "be_x" }}
{{- mapEntry "hosts.map" "nul\x00" "be_x" }}
{{- mapEntry "hosts.map" "ok.com" "be_x\nglobal" }}
{{- mapEntry "hosts.map" "ok.com" " lead" }}
{{- mapEntry "hosts.map" "ok.com" "" }}
{{- mapEntry "hosts.map" "ok.com" "be;%[src] ok" }}
`)
	if diff := cmp.Diff("ok.com be;%[src] ok\n", fileBody(t, out, "maps/hosts.map")); diff != "" {
		t.Errorf("map (-want +got):\n%s", diff)
	}
	if len(problems) != 8 {
		t.Errorf("got %d problems, want 8: %v", len(problems), problems)
	}
	for _, p := range problems {
		if p.Reason != templating.ReasonMapEntryInvalid {
			t.Errorf("problem %v: reason %s", p, p.Reason)
		}
	}
}

func TestConfigMapTemplatesAddOneEntryPerLine(t *testing.T) {
	cfg := configWith(t, preamble+`{{ mapEntry "redirects.map" "c.com" "from-cfg" }}
`, `
maps:
  redirects.map:
    ordered: true
    template: |
      # comment
      b.com   new-b.com

      a.com	new a.com
      c.com other
      lonely
`)
	out, problems, err := renderConfig(t, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff("c.com from-cfg\nb.com new-b.com\na.com new a.com\n", fileBody(t, out, "maps/redirects.map")); diff != "" {
		t.Errorf("map (-want +got):\n%s", diff)
	}
	want := []templating.Problem{
		{Object: "map redirects.map", Reason: templating.ReasonMapEntryInvalid, Message: `map redirects.map: key "lonely": value "" is empty`},
		{Object: "map redirects.map", Reason: templating.ReasonMapKeyConflict, Message: `map redirects.map: key "c.com" already maps to "from-cfg"; "other" ignored`},
	}
	if diff := cmp.Diff(want, problems); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
	if m, _ := out.Plan.Map("maps/redirects.map"); !m.Ordered {
		t.Error("config map lost ordered")
	}
}

func TestMapMisuseIsARenderError(t *testing.T) {
	for name, c := range map[string]struct{ tmpl, want string }{
		"unregistered":     {`{{ mapEntry "nope.map" "a" "b" }}`, `map "nope.map" is not registered`},
		"order flip":       {`{{ registerMap (dict "name" "m") }}{{ registerMap (dict "name" "m" "ordered" true) }}`, "registered before with ordered=false"},
		"unknown key":      {`{{ registerMap (dict "name" "m" "sorted" true) }}`, "unknown key(s) sorted"},
		"bad name":         {`{{ registerMap (dict "name" "../m") }}`, "not a clean relative path"},
		"key not a string": {`{{ registerMap (dict "name" "m") }}{{ mapEntry "m" (list 1) "b" }}`, "key must be a string"},
	} {
		t.Run(name, func(t *testing.T) {
			if got := renderError(t, c.tmpl); !contains(got, c.want) {
				t.Errorf("error %q does not contain %q", got, c.want)
			}
		})
	}
}

func TestEmptyRegisteredMapIsAnEmptyFile(t *testing.T) {
	out, _ := renderTemplate(t, preamble+`{{ $_ := registerMap (dict "name" "empty.map") }}`)
	if got := fileBody(t, out, "maps/empty.map"); got != "" {
		t.Errorf("empty map = %q", got)
	}
	if f, _ := out.Plan.File("maps/empty.map"); f.Kind != renderplan.FileMap {
		t.Errorf("kind = %s", f.Kind)
	}
}
