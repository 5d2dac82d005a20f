package templating_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/go-multierror"

	"github.com/haptic-io/haptic/renderplan"
	"github.com/haptic-io/haptic/templating"
)

// validationConfig renders a host map from services and a config line per
// service; it fails when extraContext.failOn names a service.
const validationConfig = resourcesYAML + `
extraContext: {greeting: hello}
haproxyConfig:
  template: |
    # {{ .extraContext.greeting }}
    {{- range .resources.services.List }}
    {{- if eq .metadata.name (index $.extraContext "failOn" | default "") }}{{ fail (printf "refused %s" .metadata.name) }}{{ end }}
    # svc {{ .metadata.name }}
    {{- mapEntry "hosts.map" (printf "%s.example.com" .metadata.name) .metadata.name }}
    {{- end }}
    {{- if index .extraContext "randomish" }}{{ range (keys (dict "b" 1 "a" 2 "c" 3)) }} {{ . }}{{ end }}{{ end }}
maps:
  hosts.map: {template: ""}
files:
  note.txt: {template: "note"}
sslCertificates:
  c.pem: {template: "-----BEGIN CERTIFICATE-----\nX\n-----END CERTIFICATE-----\n"}
`

func runValidation(t *testing.T, tests string, opts templating.TestOptions) (templating.TestReport, error) {
	t.Helper()
	cfg, err := templating.ParseConfig([]byte(validationConfig + "validationTests:\n" + indent(tests, "  ")))
	if err != nil {
		t.Fatal(err)
	}
	e, err := templating.Compile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return templating.RunTests(context.Background(), e, opts)
}

const twoServices = `fixtures:
  services:
    - {apiVersion: v1, kind: Service, metadata: {name: b, namespace: x}}
    - {apiVersion: v1, kind: Service, metadata: {name: a, namespace: x}}
`

func TestRunTestsAssertionsPassAndFail(t *testing.T) {
	cases := []struct {
		name      string
		assertion string
		extra     string
		pass      bool
		message   string
	}{
		{"contains passes", `{type: contains, pattern: "# svc a\n# svc b"}`, "", true, ""},
		{"contains fails", `{type: contains, pattern: "# svc c"}`, "", false, `pattern "# svc c" not found`},
		{"not_contains passes", `{type: not_contains, pattern: "svc c"}`, "", true, ""},
		{"not_contains fails", `{type: not_contains, pattern: "svc [ab]"}`, "", false, `pattern "svc [ab]" found: "svc a"`},
		{"equals passes on a map", `{type: equals, target: "map:hosts.map", expected: "a.example.com a\nb.example.com b\n"}`, "", true, ""},
		{"equals fails", `{type: equals, target: "file:note.txt", expected: "other"}`, "", false, `content differs: got "note", want "other"`},
		{"match_count passes", `{type: match_count, pattern: "# svc", expected: 2}`, "", true, ""},
		{"match_count fails", `{type: match_count, pattern: "# svc", expected: 3}`, "", false, `pattern "# svc" matched 2 times, want 3`},
		{"match_order passes", `{type: match_order, patterns: ["hello", "svc a", "svc b"]}`, "", true, ""},
		{"match_order fails", `{type: match_order, patterns: ["svc b", "svc a"]}`, "", false, `pattern "svc a" not found after offset`},
		{"cert target", `{type: contains, target: "cert:c.pem", pattern: "BEGIN"}`, "", true, ""},
		{"missing target", `{type: contains, target: "file:nope", pattern: "x"}`, "", false, "no file general/nope in the output"},
		{"extraContext override", `{type: contains, pattern: "# bonjour"}`, "extraContext: {greeting: bonjour}", true, ""},
		{"rendering_error passes", `{type: contains, target: rendering_error, pattern: "refused b"}`, "extraContext: {failOn: b}", true, ""},
		{"rendering_error without error", `{type: contains, target: rendering_error, pattern: "refused"}`, "", false, `pattern "refused" not found`},
		{"render failure fails other targets", `{type: contains, pattern: "svc"}`, "extraContext: {failOn: a}", false, "render failed:"},
		{"problems target", `{type: not_contains, target: problems, pattern: "."}`, "", true, ""},
		{"problems target with a problem", `{type: contains, target: problems, pattern: "^map hosts.map: MapEntryInvalid: .*bad key"}`, "fixtures: {services: [{apiVersion: v1, kind: Service, metadata: {name: \"bad key\", namespace: x}}]}", true, ""},
		{"deterministic passes", `{type: deterministic}`, "extraContext: {randomish: true}", true, ""},
		{"haproxy_valid without checker", `{type: haproxy_valid}`, "", false, "no checker configured"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fx := twoServices
			if strings.HasPrefix(c.extra, "fixtures:") {
				fx = ""
			}
			tests := "t:\n" + indent(fx+c.extra+"\nassertions: ["+c.assertion+"]", "  ")
			report, err := runValidation(t, tests, templating.TestOptions{})
			if len(report.Tests) != 1 || len(report.Tests[0].Assertions) != 1 {
				t.Fatalf("report = %+v", report)
			}
			a := report.Tests[0].Assertions[0]
			if a.Passed != c.pass || !strings.Contains(a.Message, c.message) {
				t.Errorf("assertion passed=%v message=%q; want passed=%v message containing %q", a.Passed, a.Message, c.pass, c.message)
			}
			if c.pass != (err == nil) {
				t.Errorf("error = %v, want nil iff passed", err)
			}
			if c.pass && (report.Passed != 1 || report.Failed != 0) || !c.pass && (report.Passed != 0 || report.Failed != 1) {
				t.Errorf("counts passed=%d failed=%d", report.Passed, report.Failed)
			}
		})
	}
}

func TestRunTestsHAProxyValidUsesTheChecker(t *testing.T) {
	var seen []string
	checker := renderplan.CheckerFunc(func(_ context.Context, out *renderplan.Output) error {
		cfg := ""
		for _, f := range out.Files {
			if f.Path == "haproxy.cfg" {
				cfg = string(f.Body)
			}
		}
		seen = append(seen, cfg)
		if strings.Contains(cfg, "svc b") {
			return errors.New("[ALERT] bad config")
		}
		return nil
	})
	tests := "ok:\n" + indent("assertions: [{type: haproxy_valid}]", "  ") +
		"bad:\n" + indent(twoServices+"assertions: [{type: haproxy_valid}, {type: contains, pattern: zzz}]", "  ")
	report, err := runValidation(t, tests, templating.TestOptions{Checker: checker, KeepOutputs: true})
	if len(seen) != 2 {
		t.Fatalf("checker called %d times", len(seen))
	}
	var me *multierror.Error
	if !errors.As(err, &me) || len(me.Errors) != 2 {
		t.Fatalf("error %v is not a multierror of 2", err)
	}
	for _, want := range []string{"test bad: assertion 0 (haproxy_valid haproxy.cfg): [ALERT] bad config", `test bad: assertion 1 (contains haproxy.cfg): pattern "zzz" not found`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	got := []string{}
	for _, r := range report.Tests {
		got = append(got, r.Name+":"+map[bool]string{true: "pass", false: "fail"}[r.Passed])
		if r.Output == nil {
			t.Errorf("test %s kept no output", r.Name)
		}
	}
	if diff := cmp.Diff([]string{"bad:fail", "ok:pass"}, got); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}
}

func TestRunTestsSelectsTestsByName(t *testing.T) {
	tests := "a:\n  assertions: [{type: contains, pattern: hello}]\nb:\n  assertions: [{type: contains, pattern: nope}]\n"
	var traced []string
	trace := func(test string, ev templating.TraceEvent) {
		if !ev.End && ev.Template != templating.TraceAssemble {
			traced = append(traced, test+":"+ev.Template)
		}
	}
	report, err := runValidation(t, tests, templating.TestOptions{Tests: []string{"a"}, Trace: trace})
	if err != nil || len(report.Tests) != 1 || report.Tests[0].Name != "a" {
		t.Fatalf("report %+v, err %v", report, err)
	}
	if diff := cmp.Diff([]string{"a:haproxy.cfg", "a:map:hosts.map", "a:file:note.txt", "a:cert:c.pem"}, traced); diff != "" {
		t.Errorf("trace (-want +got):\n%s", diff)
	}
	if _, err := runValidation(t, tests, templating.TestOptions{Tests: []string{"c"}}); err == nil || !strings.Contains(err.Error(), `no validation test "c"`) {
		t.Fatalf("unknown test: %v", err)
	}
}
