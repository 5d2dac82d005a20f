package templating_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/haptic-io/haptic/renderplan"
	"github.com/haptic-io/haptic/store"
	"github.com/haptic-io/haptic/templating"
)

// hijackKey is a key whose map-file line HAProxy would cut after 16383
// bytes, right before "victim.example.com/admin".
var hijackKey = "www.evil.test/" + strings.Repeat("a", 16369) + "victim.example.com/admin"

func problemsWith(problems []templating.Problem, reason string) []templating.Problem {
	var out []templating.Problem
	for _, p := range problems {
		if p.Reason == reason {
			out = append(out, p)
		}
	}
	return out
}

func TestMapEntryTooLongIsAValueTooLongProblemAndTheRestRenders(t *testing.T) {
	cfg := configWith(t, preamble+`{{ $_ := registerMap (dict "name" "paths.map") }}
{{- mapEntry "paths.map" "ok.example.com/" "be_ok" "Ingress good/web" }}
{{- mapEntry "paths.map" .extraContext.key "be_evil" "Ingress evil/x" }}
`, "")
	cfg.ExtraContext = map[string]any{"key": hijackKey}
	out, problems, err := renderConfig(t, cfg)
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	if got := fileBody(t, out, "maps/paths.map"); got != "ok.example.com/ be_ok\n" {
		t.Errorf("paths.map = %.80q, want only the short entry", got)
	}
	if len(problems) != 1 || problems[0].Object != "Ingress evil/x" || problems[0].Reason != templating.ReasonValueTooLong ||
		!strings.Contains(problems[0].Message, `map paths.map: key "www.evil.test/aaaa`) ||
		!strings.Contains(problems[0].Message, "more than the 12288 allowed with tune.bufsize 16384; entry left out") {
		t.Fatalf("problems = %v, want one ValueTooLong for Ingress evil/x", problems)
	}
}

func TestConfigMapTemplateLinesTooLongAreProblems(t *testing.T) {
	cfg := configWith(t, preamble, `
maps:
  redirects.map:
    template: |
      /short /target
      /long {{ .extraContext.long }}
`)
	cfg.ExtraContext = map[string]any{"long": strings.Repeat("x", 13000)}
	out, problems, err := renderConfig(t, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if got := fileBody(t, out, "maps/redirects.map"); got != "/short /target\n" {
		t.Errorf("redirects.map = %.60q", got)
	}
	if p := problemsWith(problems, templating.ReasonValueTooLong); len(p) != 1 || p[0].Object != "map redirects.map" {
		t.Fatalf("problems = %v, want one ValueTooLong for map redirects.map", problems)
	}
}

func TestTuneBufsizeSetsThePlansBufSizeAndTheBound(t *testing.T) {
	tmpl := `global
    tune.bufsize {{ tuneBufsize .extraContext.bufSize }}
defaults base
    mode http
{{ $_ := registerMap (dict "name" "m.map") }}
{{- mapEntry "m.map" (print "k" .extraContext.key) "v" "Object o" }}
`
	for _, tt := range []struct {
		bufSize any
		keyLen  int
		ok      bool
	}{
		{16384, 12000, true},
		{"8192", 12000, false},
		{8192, 6000, true},
		{32768, 14000, true},
		{65536, 16383, false}, // no bufsize raises a map line beyond 16383 bytes
	} {
		cfg := configWith(t, tmpl, "")
		cfg.ExtraContext = map[string]any{"bufSize": tt.bufSize, "key": strings.Repeat("k", tt.keyLen)}
		out, problems, err := renderConfig(t, cfg)
		if err != nil {
			t.Fatalf("bufsize %v: %v", tt.bufSize, err)
		}
		if ok := len(problems) == 0; ok != tt.ok {
			t.Errorf("bufsize %v, key of %d bytes: problems %v, want ok=%t", tt.bufSize, tt.keyLen, problems, tt.ok)
		}
		if want, _ := strconv.Atoi(fmt.Sprint(tt.bufSize)); out.Plan.BufSize != want {
			t.Errorf("plan BufSize = %d, want %d", out.Plan.BufSize, want)
		}
		if !strings.Contains(fileBody(t, out, "haproxy.cfg"), fmt.Sprintf("tune.bufsize %v\n", tt.bufSize)) {
			t.Errorf("haproxy.cfg does not set tune.bufsize %v", tt.bufSize)
		}
	}
}

func TestTuneBufsizeRefusesBadValuesAndLateChanges(t *testing.T) {
	for _, tt := range []struct{ tmpl, want string }{
		{`{{ tuneBufsize 100 }}`, "tuneBufsize: 100 is not a number of bytes from 4096 to 67108864"},
		{`{{ tuneBufsize "16k" }}`, "is not a number of bytes"},
		{`{{ $_ := registerMap (dict "name" "m.map") }}{{ mapEntry "m.map" "k" "v" }}{{ tuneBufsize 8192 }}`, "values were checked against tune.bufsize 16384 already"},
		{`{{ tuneBufsize 8192 }}{{ $_ := registerMap (dict "name" "m.map") }}{{ mapEntry "m.map" "k" "v" }}{{ tuneBufsize 4096 }}`, "values were checked against tune.bufsize 8192 already"},
	} {
		if got := renderError(t, preamble+tt.tmpl); !strings.Contains(got, tt.want) {
			t.Errorf("render %s: %s, want %q", tt.tmpl, got, tt.want)
		}
	}
	// The same value again is harmless.
	renderTemplate(t, preamble+`{{ tuneBufsize 8192 }}{{ $_ := registerMap (dict "name" "m.map") }}{{ mapEntry "m.map" "k" "v" }}{{ tuneBufsize 8192 }}`)
}

func TestLineMaxFunctionsGiveTheRoomOfALine(t *testing.T) {
	out, _ := renderTemplate(t, preamble+`# {{ mapLineMax "paths-prefix-exact.map" }} {{ crtListLineMax "crt-list.txt" }}
`)
	// 12288 - (26 + len("maps/paths-prefix-exact.map") + 2 - 1) and
	// 12288 - (23 + len("certs/crt-list.txt")).
	if got := fileBody(t, out, "haproxy.cfg"); !strings.Contains(got, "# 12234 12247\n") {
		t.Errorf("haproxy.cfg:\n%s", got)
	}
	// A key and value of exactly mapLineMax bytes fit; one more does not.
	for n, ok := range map[int]bool{12234: true, 12235: false} {
		key := strings.Repeat("k", n-len(" be_x"))
		err := renderplan.CheckMapEntry("maps/paths-prefix-exact.map", key, "be_x", 0)
		if (err == nil) != ok {
			t.Errorf("entry of %d bytes: %v, want ok=%t", n, err, ok)
		}
	}
}

func TestCrtListLinesTooLongAreLeftOutWithAProblem(t *testing.T) {
	cfg := configWith(t, preamble+`frontend fe from base
    bind 127.0.0.1:8443 ssl crt-list {{ crtList (dict "name" "list.txt" "content" (printf "certs/a.pem a.example.com\ncerts/b.pem %s\ncerts/c.pem c.example.com\n" .extraContext.hosts)) }}
`, "")
	cfg.ExtraContext = map[string]any{"hosts": strings.Repeat("h.example.com ", 1000) + "x"}
	out, problems, err := renderConfig(t, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if got := fileBody(t, out, "certs/list.txt"); got != "certs/a.pem a.example.com\ncerts/c.pem c.example.com\n" {
		t.Errorf("crt-list = %.80q, want lines 1 and 3", got)
	}
	if len(problems) != 1 || problems[0].Object != "crt-list list.txt" || problems[0].Reason != templating.ReasonValueTooLong ||
		!strings.Contains(problems[0].Message, "line 2 \"certs/b.pem h.example.com") {
		t.Fatalf("problems = %v", problems)
	}
}

func TestCertWithANameTooLongIsAProblem(t *testing.T) {
	cfg := configWith(t, preamble+`# [{{ cert (dict "name" .extraContext.name "pem" "-----BEGIN CERTIFICATE-----\n" "object" "Secret ns/x") }}]
`, "")
	cfg.ExtraContext = map[string]any{"name": strings.Repeat("n", 1016) + ".pem"}
	out, problems, err := renderConfig(t, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(fileBody(t, out, "haproxy.cfg"), "# []") {
		t.Error("cert returned a path for a name too long")
	}
	if len(problems) != 1 || problems[0].Object != "Secret ns/x" || problems[0].Reason != templating.ReasonValueTooLong {
		t.Fatalf("problems = %v", problems)
	}
}

func TestBackendAndServerValuesTooLongAreProblems(t *testing.T) {
	long := strings.Repeat("n", renderplan.MaxNameLen+1)
	cfg := configWith(t, preamble+`{{ backend (dict "name" .extraContext.long "object" "Ingress ns/a") }}
{{ backend (dict "name" "be_ok" "object" "Ingress ns/b" "servers" (list
    (dict "name" .extraContext.long "address" "10.0.0.1" "port" 80)
    (dict "name" "kw" "address" "10.0.0.2" "port" 80 "keywords" (list .extraContext.kw .extraContext.kw))
    (dict "name" "fine" "address" "10.0.0.3" "port" 80))) }}
`, "")
	cfg.ExtraContext = map[string]any{"long": long, "kw": strings.Repeat("k", 512)}
	out, problems, err := renderConfig(t, cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"Ingress ns/a: BackendInvalid: backend \"" + long + "\": name is longer than 512 bytes",
		"Ingress ns/b: ServerInvalid: backend \"be_ok\": server \"kw\": keywords take 1025 bytes, more than 1024",
		"Ingress ns/b: ServerInvalid: backend \"be_ok\": server \"" + long + "\": name is longer than 512 bytes",
	}
	var got []string
	for _, p := range problems {
		got = append(got, p.String())
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
	if s := serversOf(t, out, "be_ok"); len(s) != 1 || s[0].Name != "fine" {
		t.Errorf("servers = %v, want only fine", s)
	}
}

func TestBackendServersReportsAnEndpointPortOutOfRange(t *testing.T) {
	objs := []map[string]any{
		service("ns", "web", svcPort("http", 80)),
		slice("ns", "web-a", "web", map[string]int64{"http": 8080}, endpoint{addr: "10.0.0.1", pod: "a"}),
		slice("ns", "web-b", "web", map[string]int64{"http": 70000}, endpoint{addr: "10.0.0.2", pod: "b"}),
		slice("ns", "web-c", "web", map[string]int64{"http": 0}, endpoint{addr: "10.0.0.3", pod: "c"}),
	}
	out, problems := renderTemplate(t, sprintf(serversTmpl, `"http"`), objs...)
	webRef := templating.ObjectRef{APIVersion: "v1", Kind: "Service", Namespace: "ns", Name: "web"}
	want := []templating.Problem{
		{Object: "Service ns/web", Ref: webRef, Reason: templating.ReasonEndpointInvalid, Message: "service ns/web: EndpointSlice web-b: port 70000 is not 1-65535; its endpoints are left out"},
		{Object: "Service ns/web", Ref: webRef, Reason: templating.ReasonEndpointInvalid, Message: "service ns/web: EndpointSlice web-c: port 0 is not 1-65535; its endpoints are left out"},
	}
	if diff := cmp.Diff(want, problems); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
	if s := serversOf(t, out, "be"); len(s) != 1 || s[0].Name != "a" {
		t.Errorf("servers = %v, want only a", s)
	}
	// A slice port without a number means every port: no problem.
	noPort := slice("ns", "web-d", "web", nil, endpoint{addr: "10.0.0.4", pod: "d"})
	noPort["ports"] = []any{map[string]any{"name": "http", "port": nil}}
	if _, problems := renderTemplate(t, sprintf(serversTmpl, `"http"`), objs[0], objs[1], noPort); len(problems) != 0 {
		t.Errorf("problems for a port without a number: %v", problems)
	}
}

func TestHaproxyNameCutsLongNamesToALegalUniqueName(t *testing.T) {
	long := strings.Repeat("p", 600)
	a, b := templating.SanitizeName(long+"a"), templating.SanitizeName(long+"b")
	if len(a) != renderplan.MaxNameLen || renderplan.CheckName(a) != nil || a == b {
		t.Errorf("SanitizeName of 601 bytes = %q (%d bytes), %q", a, len(a), b)
	}
	// A pod name too long still makes a server, of a legal name.
	out, problems := renderTemplate(t, sprintf(serversTmpl, `"http"`),
		service("ns", "web", svcPort("http", 80)),
		slice("ns", "web-a", "web", map[string]int64{"http": 8080}, endpoint{addr: "10.0.0.1", pod: long}, endpoint{addr: "10.0.0.2", pod: long}))
	if len(problems) != 0 {
		t.Fatalf("problems: %v", problems)
	}
	for _, s := range serversOf(t, out, "be") {
		if len(s.Name) > renderplan.MaxNameLen {
			t.Errorf("server name of %d bytes", len(s.Name))
		}
	}
}

// An engine replays renderEach items it rendered before; their verdicts
// hold for one tune.bufsize, so a render with another gets the verdicts a
// fresh engine gives.
func TestRenderEachVerdictsFollowTheBufSizeAcrossRenders(t *testing.T) {
	cfg := configWith(t, `global
{{- with .extraContext.bufSize }}
    tune.bufsize {{ tuneBufsize . }}
{{- end }}
defaults base
    mode http
{{ $_ := registerMap (dict "name" "m.map") }}
{{- renderEach "item" (.resources.ingresses.List) }}
`, `
snippets:
  item:
    template: |
      {{- mapEntry "m.map" .metadata.annotations.key "v" (print "Ingress " .metadata.name) -}}
`)
	st, err := store.NewMemory(cfg.WatchedResources)
	if err != nil {
		t.Fatal(err)
	}
	for i, n := range []int{10, 7000, 14000} {
		if _, err := st.AddObjects(map[string]any{
			"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
			"metadata": map[string]any{"namespace": "ns", "name": sprintf("i%d", i), "annotations": map[string]any{"key": sprintf("k%d-", i) + strings.Repeat("k", n)}},
		}); err != nil {
			t.Fatal(err)
		}
	}
	e, err := templating.Compile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, bufSize := range []any{nil, 8192, 32768, nil, 32768, 16384} {
		opts := templating.RenderOptions{ExtraContext: map[string]any{"bufSize": bufSize}}
		out, problems, err := e.Render(context.Background(), st.Snapshot(), opts)
		if err != nil {
			t.Fatal(err)
		}
		fresh, _ := templating.Compile(cfg)
		wantOut, wantProblems, err := fresh.Render(context.Background(), st.Snapshot(), opts)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(wantProblems, problems); diff != "" {
			t.Errorf("bufsize %v: problems (-fresh +replayed):\n%s", bufSize, diff)
		}
		if out.ID() != wantOut.ID() {
			t.Errorf("bufsize %v: plan differs from a fresh engine's", bufSize)
		}
	}
}
