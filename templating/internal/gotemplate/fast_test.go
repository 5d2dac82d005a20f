package gotemplate_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	stdtemplate "text/template"

	"github.com/Masterminds/sprig/v3"

	template "github.com/haptic-io/haptic/templating/internal/gotemplate"
)

// named has a String method: print must not treat it as a plain string.
type named string

func (n named) String() string { return "named:" + string(n) }

// diffFuncs are functions with the signatures fastCall handles, plus
// sprig, registered in both engines.
func diffFuncs() map[string]any {
	fm := map[string]any{}
	for k, v := range sprig.TxtFuncMap() {
		fm[k] = v
	}
	fm["cacheGet"] = func(k string) any {
		if k == "nil" {
			return nil
		}
		return k
	}
	fm["three"] = func(a, b, c string) string { return a + b + c }
	fm["render"] = func(name string, data any) (string, error) {
		if name == "fail" {
			return "", errors.New("render failed")
		}
		return fmt.Sprintf("%s:%v", name, data), nil
	}
	fm["entry"] = func(m string, k, v any, obj ...string) (string, error) {
		return fmt.Sprint(m, k, v, obj), nil
	}
	fm["backend"] = func(d map[string]any, more ...map[string]any) (string, error) {
		return fmt.Sprint(len(d), len(more)), nil
	}
	fm["boom"] = func(s string) string { panic("boom " + s) }
	fm["named"] = func(s string) named { return named(s) }
	fm["guardedSet"] = func(d map[string]any, k string, v any) (map[string]any, error) {
		if k == "frozen" {
			return nil, errors.New("frozen")
		}
		d[k] = v
		return d, nil
	}
	return fm
}

func diffData() map[string]any {
	return map[string]any{
		"s":     "str",
		"empty": "",
		"n":     int64(42),
		"f":     1.5,
		"b":     true,
		"nil":   nil,
		"m":     map[string]any{"a": "x", "nested": map[string]any{"deep": "y"}, "nil": nil},
		"l":     []any{"a", int64(1), nil, map[string]any{"k": "v"}},
		"fn":    func() string { return "f" },
		"typed": map[string]string{"k": "v"},
	}
}

// TestForkMatchesTextTemplate runs the same templates through the standard
// library's text/template and the fork: output and error text must match.
func TestForkMatchesTextTemplate(t *testing.T) {
	cases := []string{
		`{{ .s }}|{{ .empty }}|{{ .n }}|{{ .f }}|{{ .b }}|{{ .nil }}|{{ .missing }}`,
		`{{ .m.a }}|{{ .m.nested.deep }}|{{ .m.nil }}|{{ .m.missing }}|{{ .l }}`,
		`{{ if .empty }}t{{ else }}f{{ end }}{{ if .nil }}t{{ else }}f{{ end }}{{ if .m.nil }}t{{ else }}f{{ end }}{{ with .m.missing }}w{{ end }}`,
		`{{ eq .s "str" }} {{ eq .n 42 }} {{ eq .m.missing "x" }} {{ eq .nil nil }} {{ ne .s "x" }} {{ not .empty }} {{ not .m.nil }}`,
		`{{ eq .s "a" "b" "str" }} {{ eq .s }}`,
		`{{ eq .s 1 }}`,
		`{{ index .m "a" }} {{ index .l 1 }} {{ index .m "missing" }} {{ index .typed "k" }} {{ index .l 9 }}`,
		`{{ index .m "nested" }}|{{ (index .m "nested").deep }}|{{ with index .m "nested" }}{{ .deep }}{{ end }}|{{ index .m "nil" }}|{{ index . "m" "a" }}|{{ index (dict) "k" }}`,
		`{{ $n := index .m "nested" }}{{ index $n "deep" }}|{{ trimAll "st" (index . "s") }}|{{ or (index .m "missing") "dflt" }}|{{ printf "%T %T" (index .m "nested") (index .m "a") }}`,
		`{{ index .s "k" }}`,
		`{{ index .m.nil "k" }}`,
		`{{ and .s .n }} {{ or .empty .nil .s }} {{ and .empty .s }} {{ or .m.missing "dflt" }} {{ or (cacheGet "nil") "x" }}`,
		`{{ print "a" .s "b" }}|{{ print .n .s }}|{{ print 1 2 }}|{{ print .nil }}|{{ print (named "x") "y" }}|{{ print }}`,
		`{{ printf "%s-%d" .s .n }}|{{ printf "%q" .m.missing }}`,
		`{{ trimAll "st" .s }}|{{ trimSuffix "r" .s }}|{{ hasPrefix "s" .s }}|{{ hasPrefix "s" .n }}|{{ upper .s }}|{{ toString .n }}`,
		`{{ three "a" .s "c" }}|{{ render "x" .m.a }}|{{ render "fail" 1 }}`,
		`{{ entry "m" .s .n }}|{{ entry "m" "k" "v" "o" }}|{{ entry "m" .s .n .s }}`,
		`{{ entry "m" .s .n .n }}`,
		`{{ $d := dict "a" .s "b" .n }}{{ $d.a }}{{ $d.b }}{{ $_ := set $d "c" .m }}{{ $d.c.a }}{{ backend $d }}{{ backend $d $d .m }}`,
		`{{ backend .typed }}`,
		`{{ values .m.nested }}|{{ range values (dict "a" .s) }}[{{ . }}]{{ end }}|{{ len (values .m) }}|{{ len (values (dict)) }}|{{ values .typed }}`,
		`{{ $d := dict }}{{ $_ := guardedSet $d "a" .n }}{{ $d.a }}|{{ guardedSet .m "x" .s }}|{{ guardedSet $d "frozen" 1 }}`,
		`{{ guardedSet .typed "a" 1 }}`,
		`{{ cacheGet "k" }}|{{ cacheGet "nil" }}|{{ if cacheGet "nil" }}t{{ else }}f{{ end }}|{{ printf "%v" (cacheGet "nil") }}`,
		`{{ boom "x" }}`,
		`{{ .fn }}|{{ .s.x }}`,
		`{{ .m.a.b }}`,
		`{{ range $k, $v := .m }}{{ $k }}={{ $v }};{{ end }}{{ range .l }}[{{ . }}]{{ end }}`,
		`{{ $x := .m.missing }}{{ $x }}|{{ $y := .m.nil }}{{ $y }}|{{ len .l }}|{{ slice .s 1 2 }}`,
		`{{ .s | printf "%s!" }}|{{ "x" | eq .s }}|{{ .m | index .m "a" }}`,
		`{{ not }}`,
		`{{ index }}`,
		`{{ hasPrefix "s" }}`,
		`{{ named "x" | print }}|{{ named "x" }}`,
		`{{ define "sub" }}{{ $a := 1 }}{{ $b := .s }}{{ $a }}{{ $b }}{{ $ }}{{ end }}{{ $x := "outer" }}{{ range .l }}{{ template "sub" $.m }}{{ $x }}{{ end }}{{ $x }}`,
		`{{ define "rec" }}{{ if . }}{{ $v := . }}{{ template "rec" (slice . 1) }}{{ $v }}{{ end }}{{ end }}{{ $o := 1 }}{{ template "rec" "abcd" }}{{ $o }}`,
		`{{ range $i, $e := .l }}{{ if eq $i 2 }}{{ break }}{{ end }}{{ $i }}{{ end }}{{ range $i, $e := .l }}{{ if eq $i 1 }}{{ continue }}{{ end }}{{ print $i $e }}{{ end }}`,
		`{{ define "err" }}{{ $z := 1 }}{{ .nope.x }}{{ end }}{{ $y := 2 }}{{ template "err" .m.a }}`,
	}
	for i, text := range cases {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			wantOut, wantErr := runStd(text, diffData())
			gotOut, gotErr := runFork(text, diffData())
			if gotOut != wantOut || gotErr != wantErr {
				t.Errorf("template %s\nstdlib: %q, error %q\nfork:   %q, error %q", text, wantOut, wantErr, gotOut, gotErr)
			}
		})
	}
}

func runStd(text string, data any) (string, string) {
	tm, err := stdtemplate.New("t").Funcs(diffFuncs()).Parse(text)
	if err != nil {
		return "", "parse: " + err.Error()
	}
	var b strings.Builder
	err = tm.Execute(&b, data)
	return b.String(), errText(err)
}

func runFork(text string, data any) (string, string) {
	tm, err := template.New("t").Funcs(diffFuncs()).Parse(text)
	if err != nil {
		return "", "parse: " + err.Error()
	}
	var b strings.Builder
	err = tm.Execute(&b, data)
	return b.String(), errText(err)
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	// Type names differ only by the package: text/template vs gotemplate.
	return strings.ReplaceAll(err.Error(), "gotemplate.", "template.")
}

// FuzzForkMatchesTextTemplate is the differential test on arbitrary
// template text (seeds in testdata/fuzz).
func FuzzForkMatchesTextTemplate(f *testing.F) {
	f.Add(`{{ eq .s "str" }}{{ index .m "a" }}{{ print .s .n }}`)
	f.Add(`{{ if and .m.a (not .empty) }}{{ trimAll "s" .s }}{{ end }}`)
	f.Fuzz(func(t *testing.T, text string) {
		if len(text) > 512 || strings.Contains(text, "boom") {
			return
		}
		wantOut, wantErr := runStd(text, diffData())
		gotOut, gotErr := runFork(text, diffData())
		if gotOut != wantOut || gotErr != wantErr {
			t.Errorf("template %q\nstdlib: %q, error %q\nfork:   %q, error %q", text, wantOut, wantErr, gotOut, gotErr)
		}
	})
}
