package templating

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/Masterminds/sprig/v3"
)

// TestRegexFuncsMatchSprigs calls every cached regex function and sprig's
// of the same name with the same arguments, good and bad patterns, twice
// (the second call hits the cache): same type, same results, same panic.
func TestRegexFuncsMatchSprigs(t *testing.T) {
	var c regexpCache
	ours, theirs := c.funcs(), sprig.TxtFuncMap()
	patterns := []string{`^[0-9]{1,6}$`, `a(b*)`, `(`, ``, `[[:alpha:]]+`}
	subjects := []string{"123", "abbbc ab a", "", "x(y"}
	for name, f := range ours {
		g, ok := theirs[name]
		if !ok {
			t.Errorf("%s: sprig has no such function", name)
			continue
		}
		fv, gv := reflect.ValueOf(f), reflect.ValueOf(g)
		if fv.Type() != gv.Type() {
			t.Errorf("%s: type %v, sprig's %v", name, fv.Type(), gv.Type())
			continue
		}
		for range 2 {
			for _, p := range patterns {
				for _, s := range subjects {
					args := []reflect.Value{reflect.ValueOf(p), reflect.ValueOf(s)}
					switch fv.Type().NumIn() {
					case 3:
						if fv.Type().In(2).Kind() == reflect.Int {
							args = append(args, reflect.ValueOf(-1))
						} else {
							args = append(args, reflect.ValueOf("<$1>"))
						}
					}
					got, want := call(fv, args), call(gv, args)
					if got != want {
						t.Errorf("%s(%q, %q): %s, sprig: %s", name, p, s, got, want)
					}
				}
			}
		}
	}
	if n := c.n.Load(); n != int32(len(patterns)) {
		t.Errorf("%d patterns cached, want %d", n, len(patterns))
	}
}

// call returns f's results, or its panic, as text.
func call(f reflect.Value, args []reflect.Value) (out string) {
	defer func() {
		if r := recover(); r != nil {
			out = fmt.Sprintf("panic: %v", r)
		}
	}()
	for _, v := range f.Call(args) {
		out += fmt.Sprintf("%#v;", v.Interface())
	}
	return out
}

// TestRegexpCacheIsBounded fills the cache past its bound: patterns past
// it still compile, uncached.
func TestRegexpCacheIsBounded(t *testing.T) {
	var c regexpCache
	for i := range maxCachedRegexps + 10 {
		re, err := c.compile(fmt.Sprintf("^x{%d}$", i))
		if err != nil || !re.MatchString(strings.Repeat("x", i)) {
			t.Fatalf("pattern %d: %v", i, err)
		}
	}
	if n := c.n.Load(); n != maxCachedRegexps {
		t.Fatalf("%d patterns cached, want %d", n, maxCachedRegexps)
	}
}
