package templating_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/haptic-io/haptic/templating"
	"github.com/haptic-io/haptic/templating/fixtures"
)

// hostileValues try to break out of a map line, a server line or the
// config: newlines, separators, comments, sample-fetch syntax, quotes, NUL.
var hostileValues = []string{
	"evil.com\nbackend x",
	"a;b",
	"%[src]",
	"a b",
	"#x",
	`"q"`,
	"nul\x00",
	"tab\there",
	"cr\rx",
	"ok.example.com",
}

func TestHostileObjectsCannotChangeTheConfigsMeaning(t *testing.T) {
	objs := fixtures.GenerateIngressMix(len(hostileValues))
	k := 0
	for _, o := range objs {
		switch o["kind"] {
		case "Ingress":
			rule := o["spec"].(map[string]any)["rules"].([]any)[0].(map[string]any)
			rule["host"] = hostileValues[k]
			paths := rule["http"].(map[string]any)["paths"].([]any)
			paths[0].(map[string]any)["path"] = "/" + hostileValues[k]
			k++
		case "EndpointSlice":
			ep := o["endpoints"].([]any)[0].(map[string]any)
			ep["targetRef"].(map[string]any)["name"] = "pod\n    server evil 6.6.6.6:80"
			ep2 := o["endpoints"].([]any)[1].(map[string]any)
			ep2["addresses"] = []any{"6.6.6.6\nserver x"}
		}
	}
	cfg, err := templating.LoadConfig("testdata/bench.yaml")
	if err != nil {
		t.Fatal(err)
	}
	out, problems, err := renderConfig(t, cfg, objs...)
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	if len(problems) == 0 {
		t.Fatal("no problems reported for hostile objects")
	}
	reasons := map[string]bool{}
	for _, p := range problems {
		reasons[p.Reason] = true
	}
	for _, r := range []string{templating.ReasonMapEntryInvalid, templating.ReasonEndpointInvalid} {
		if !reasons[r] {
			t.Errorf("no %s problem in %v", r, problems)
		}
	}
	cfgText := fileBody(t, out, "haproxy.cfg")
	for _, bad := range []string{"\nbackend x", "\x00", "\r", "\nserver x", "\n    server evil"} {
		if strings.Contains(cfgText, bad) {
			t.Errorf("haproxy.cfg contains %q", bad)
		}
	}
	for _, line := range strings.Split(strings.TrimSuffix(cfgText, "\n"), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "server ") && !regexp.MustCompile(`^    server [A-Za-z0-9_.:-]+ 10\.[0-9.]+:8080 weight 1$`).MatchString(line) {
			t.Errorf("unexpected server line %q", line)
		}
	}
	mapLine := regexp.MustCompile(`^[^\s#][^\s]* [^\s](.*[^\s])?$`)
	for _, f := range out.Files {
		if !strings.HasPrefix(f.Path, "maps/") {
			continue
		}
		for _, line := range strings.Split(strings.TrimSuffix(string(f.Body), "\n"), "\n") {
			if line == "" {
				continue
			}
			if !mapLine.MatchString(line) || strings.ContainsAny(line, "\x00\r") {
				t.Errorf("%s: line %q is not one key and one value", f.Path, line)
			}
			if strings.Contains(line, "evil") || strings.Contains(line, "backend x") {
				t.Errorf("%s: hostile text %q reached the map", f.Path, line)
			}
		}
	}
	if got := fileBody(t, out, "maps/path-prefix.map"); !strings.Contains(got, "ok.example.com/ok.example.com ") {
		t.Errorf("the benign object lost its route:\n%s", got)
	}
}
