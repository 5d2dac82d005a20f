package templating_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/haptic-io/haptic/store"
	"github.com/haptic-io/haptic/templating"
)

func TestParseConfigReadsTheFullShape(t *testing.T) {
	cfg, err := templating.ParseConfig([]byte(resourcesYAML + `
haproxyConfig: {template: "global"}
snippets: {s: {template: "x"}}
maps: {hosts.map: {template: "a b", ordered: true}}
files: {e.http: {template: "f", reloadOnChange: false}}
sslCertificates: {c.pem: {template: "p"}}
extraContext: {ingressClass: haptic, num: 3, f: 1.5}
validationTests:
  t1:
    description: d
    fixtures: {services: [{apiVersion: v1, kind: Service, metadata: {name: s, namespace: n}, spec: {ports: [{port: 80}]}}]}
    extraContext: {ingressClass: other}
    assertions:
      - {type: contains, target: haproxy.cfg, pattern: "glo"}
      - {type: match_count, target: "map:hosts.map", pattern: "a", expected: 1}
      - {type: equals, target: "file:e.http", expected: "f"}
      - {type: match_order, patterns: ["a", "b"]}
      - {type: deterministic}
      - {type: haproxy_valid}
      - {type: not_contains, target: rendering_error, pattern: "x"}
      - {type: contains, target: "cert:c.pem", pattern: "p"}
      - {type: not_contains, target: problems, pattern: "x"}
`))
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.ExtraContext["num"]; got != int64(3) {
		t.Errorf("extraContext num = %#v, want int64(3)", got)
	}
	if got := cfg.ExtraContext["f"]; got != 1.5 {
		t.Errorf("extraContext f = %#v, want 1.5", got)
	}
	port := cfg.ValidationTests["t1"].Fixtures["services"][0]["spec"].(map[string]any)["ports"].([]any)[0].(map[string]any)["port"]
	if port != int64(80) {
		t.Errorf("fixture port = %#v, want int64(80)", port)
	}
	if !cfg.Maps["hosts.map"].Ordered || *cfg.Files["e.http"].ReloadOnChange {
		t.Error("map ordered or file reloadOnChange lost")
	}
	if len(cfg.ValidationTests["t1"].Assertions) != 9 {
		t.Error("assertions lost")
	}
}

func TestParseConfigRejectsInvalidConfigs(t *testing.T) {
	cases := map[string]struct{ yaml, want string }{
		"unknown field":       {`haproxyConfig: {template: x, tmpl: y}`, `unknown field "tmpl"`},
		"unknown top field":   {`haproxyConfigs: {template: x}`, `unknown field "haproxyConfigs"`},
		"bad alias":           {`watchedResources: {my-alias: {apiVersion: v1, resource: services}}`, `alias must be an identifier`},
		"missing resource":    {`watchedResources: {s: {apiVersion: v1}}`, `resource is empty`},
		"bad indexBy":         {`watchedResources: {s: {apiVersion: v1, resource: services, indexBy: ["metadata..name"]}}`, `expected a field name`},
		"unknown assertion":   {`validationTests: {t: {assertions: [{type: looks_good}]}}`, `unknown assertion type "looks_good"`},
		"unknown target":      {`validationTests: {t: {assertions: [{type: contains, target: "frontend:x", pattern: a}]}}`, `unknown target "frontend:x"`},
		"empty target name":   {`validationTests: {t: {assertions: [{type: contains, target: "map:", pattern: a}]}}`, `unknown target "map:"`},
		"bad regex":           {`validationTests: {t: {assertions: [{type: contains, pattern: "("}]}}`, "missing closing )"},
		"count not a number":  {`validationTests: {t: {assertions: [{type: match_count, pattern: a, expected: "2"}]}}`, "expected must be a non-negative integer"},
		"equals not a string": {`validationTests: {t: {assertions: [{type: equals, expected: 2}]}}`, "expected must be a string"},
		"order without list":  {`validationTests: {t: {assertions: [{type: match_order}]}}`, "patterns is empty"},
		"fixture alias":       {`validationTests: {t: {fixtures: {nope: []}, assertions: []}}`, `fixtures for unknown alias "nope"`},
		"map path escape":     {`maps: {../x: {template: a}}`, "not a clean relative path"},
		"duplicate key":       {"haproxyConfig: {template: x}\nhaproxyConfig: {template: y}", "already set in map"},
		"not yaml":            {"haproxyConfig: [", "parse config"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := templating.ParseConfig([]byte(c.yaml))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want it to contain %q", err, c.want)
			}
		})
	}
}

func TestLoadConfigNamesTheFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "c.yaml")
	if err := os.WriteFile(p, []byte("bogus: 1"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := templating.LoadConfig(p); err == nil || !strings.Contains(err.Error(), p) {
		t.Fatalf("error %v does not name %s", err, p)
	}
	if _, err := templating.LoadConfig(p + ".missing"); err == nil {
		t.Fatal("missing file loaded")
	}
}

func TestMergeLaterConfigsWin(t *testing.T) {
	lib1, _ := templating.ParseConfig([]byte(`
watchedResources: {svc: {apiVersion: v1, resource: services}}
haproxyConfig: {template: "lib1"}
snippets: {a: {template: "lib1-a"}, b: {template: "lib1-b"}}
maps: {m: {template: "lib1"}}
extraContext: {a: 1, b: 1}
validationTests: {t: {assertions: []}}
`))
	lib2, _ := templating.ParseConfig([]byte(`
snippets: {b: {template: "lib2-b"}, c: {template: "lib2-c"}}
files: {f: {template: "lib2"}}
extraContext: {b: 2}
`))
	op, _ := templating.ParseConfig([]byte(`
haproxyConfig: {template: "op"}
snippets: {c: {template: "op-c"}}
sslCertificates: {p: {template: "op"}}
extraContext: {c: 3}
`))
	got := templating.Merge(lib1, lib2, nil, op)
	want := &templating.Config{
		WatchedResources: map[string]store.WatchedResource{"svc": {APIVersion: "v1", Resource: "services"}},
		HAProxyConfig:    &templating.TemplateSource{Template: "op"},
		Snippets: map[string]templating.TemplateSource{
			"a": {Template: "lib1-a"}, "b": {Template: "lib2-b"}, "c": {Template: "op-c"},
		},
		Maps:            map[string]templating.MapTemplate{"m": {Template: "lib1"}},
		Files:           map[string]templating.FileTemplate{"f": {Template: "lib2"}},
		SSLCertificates: map[string]templating.TemplateSource{"p": {Template: "op"}},
		ExtraContext:    map[string]any{"a": int64(1), "b": int64(2), "c": int64(3)},
		ValidationTests: map[string]templating.ValidationTest{"t": {Assertions: []templating.Assertion{}}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("merge (-want +got):\n%s", diff)
	}
	if lib1.Snippets["b"].Template != "lib1-b" || lib1.HAProxyConfig.Template != "lib1" {
		t.Error("merge modified its input")
	}
	if m := templating.Merge(lib1); m.HAProxyConfig.Template != "lib1" {
		t.Error("merge of one config lost haproxyConfig")
	}
	if m := templating.Merge(op, lib2); m.HAProxyConfig.Template != "op" {
		t.Error("a config without haproxyConfig replaced it")
	}
}
