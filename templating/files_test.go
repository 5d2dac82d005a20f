package templating_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/haptic-io/haptic/renderplan"
	"github.com/haptic-io/haptic/templating"
)

const fakePEM = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"

func TestFileCertAndCrtListRecordFilesAndReturnPaths(t *testing.T) {
	cfg := configWith(t, preamble+`    errorfile 503 {{ file (dict "name" "503.http" "content" "HTTP/1.0 503 x\r\n\r\n") }}
    # {{ cert (dict "name" "a.pem" "pem" .extraContext.pem) }}
    # {{ crtList (dict "name" "list.txt" "content" "certs/a.pem\n") }}
    # {{ file (dict "name" "static.txt" "content" "x" "reloadOnChange" false) }}
`, `
extraContext:
  pem: "`+"-----BEGIN CERTIFICATE-----\\nMIIB\\n-----END CERTIFICATE-----"+`"
files:
  hello.txt: {template: "hello {{ index .extraContext \"who\" | default \"world\" }}"}
sslCertificates:
  b.pem: {template: "{{ .extraContext.pem }}"}
  empty.pem: {template: "{{/* nothing */}}"}
`)
	out, problems, err := renderConfig(t, cfg)
	if err != nil || len(problems) > 0 {
		t.Fatalf("render: %v %v", err, problems)
	}
	cfgText := fileBody(t, out, "haproxy.cfg")
	for _, p := range []string{"errorfile 503 general/503.http", "# certs/a.pem", "# certs/list.txt", "# general/static.txt"} {
		if !contains(cfgText, p) {
			t.Errorf("haproxy.cfg lacks %q:\n%s", p, cfgText)
		}
	}
	type fileInfo struct {
		Kind   renderplan.FileKind
		Reload bool
		Body   string
	}
	got := map[string]fileInfo{}
	for i, f := range out.Files {
		if f.Path == "haproxy.cfg" {
			continue
		}
		got[f.Path] = fileInfo{f.Kind, out.Plan.Files[i].ReloadOnChange, string(f.Body)}
	}
	want := map[string]fileInfo{
		"general/503.http":   {renderplan.FileGeneral, true, "HTTP/1.0 503 x\r\n\r\n"},
		"general/static.txt": {renderplan.FileGeneral, false, "x"},
		"general/hello.txt":  {renderplan.FileGeneral, true, "hello world"},
		"certs/a.pem":        {renderplan.FileCert, false, fakePEM},
		"certs/b.pem":        {renderplan.FileCert, false, fakePEM},
		"certs/list.txt":     {renderplan.FileCrtList, false, "certs/a.pem\n"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
}

func TestCertWithoutPEMIsAProblem(t *testing.T) {
	out, problems := renderTemplate(t, preamble+`# [{{ cert (dict "name" "x.pem" "pem" "garbage" "object" "Secret ns/x") }}]
`)
	want := []templating.Problem{{Object: "Secret ns/x", Reason: templating.ReasonCertificateInvalid, Message: "certificate x.pem: no PEM block"}}
	if diff := cmp.Diff(want, problems); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
	if !contains(fileBody(t, out, "haproxy.cfg"), "# []") {
		t.Error("cert with a problem did not return an empty path")
	}
}

func TestFileMisuseIsARenderError(t *testing.T) {
	for name, c := range map[string]struct{ tmpl, want string }{
		"conflict":      {`{{ file (dict "name" "a" "content" "1") }}{{ file (dict "name" "a" "content" "2") }}`, "recorded twice with different content"},
		"escape":        {`{{ file (dict "name" "../etc/passwd" "content" "1") }}`, "not a clean relative path"},
		"absolute":      {`{{ file (dict "name" "/etc/passwd" "content" "1") }}`, "absolute"},
		"unknown key":   {`{{ cert (dict "name" "a" "pem" "x" "key" "y") }}`, "unknown key(s) key"},
		"crtlist key":   {`{{ crtList (dict "name" "a" "body" "x") }}`, "unknown key(s) body"},
		"space in name": {`{{ file (dict "name" "a b" "content" "1") }}`, "whitespace"},
	} {
		t.Run(name, func(t *testing.T) {
			if got := renderError(t, c.tmpl); !contains(got, c.want) {
				t.Errorf("error %q does not contain %q", got, c.want)
			}
		})
	}
}

func TestSameFileTwiceWithSameContentIsFine(t *testing.T) {
	out, _ := renderTemplate(t, `{{ file (dict "name" "a" "content" "1") }}{{ file (dict "name" "a" "content" "1") }}
`)
	if got := fileBody(t, out, "general/a"); got != "1" {
		t.Errorf("general/a = %q", got)
	}
}
