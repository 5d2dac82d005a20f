package templating

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/haptic-io/haptic/store"
)

// dictArgs reads the dict argument of an author-API function strictly:
// wrong types and unknown keys are errors (template bugs), reported with
// the function's name.
type dictArgs struct {
	fn   string
	d    map[string]any
	errs []string
}

func newDictArgs(fn string, d map[string]any, allowed ...string) dictArgs {
	a := dictArgs{fn: fn, d: d}
	var unknown []string
	for k := range d {
		if !slices.Contains(allowed, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		a.errs = append(a.errs, fmt.Sprintf("unknown key(s) %s (allowed: %s)", strings.Join(unknown, ", "), strings.Join(allowed, ", ")))
	}
	return a
}

func (a *dictArgs) fail(key, format string, args ...any) {
	a.errs = append(a.errs, fmt.Sprintf("%s: ", key)+fmt.Sprintf(format, args...))
}

func (a *dictArgs) err() error {
	if len(a.errs) == 0 {
		return nil
	}
	return fmt.Errorf("%s: %s", a.fn, strings.Join(a.errs, "; "))
}

func (a *dictArgs) has(key string) bool {
	v, ok := a.d[key]
	return ok && v != nil
}

// str returns a string (or a number rendered in decimal) value.
func (a *dictArgs) str(key string, required bool) string {
	v, ok := a.d[key]
	if !ok || v == nil {
		if required {
			a.fail(key, "is required")
		}
		return ""
	}
	s, ok := store.ScalarString(v)
	if !ok {
		a.fail(key, "must be a string, not %T", v)
	}
	if required && s == "" {
		a.fail(key, "is empty")
	}
	return s
}

func (a *dictArgs) boolean(key string) bool {
	v, ok := a.d[key]
	if !ok || v == nil {
		return false
	}
	b, ok := v.(bool)
	if !ok {
		a.fail(key, "must be a boolean, not %T", v)
	}
	return b
}

// integer returns an int value; found is false when the key is absent.
func (a *dictArgs) integer(key string) (n int, found bool) {
	v, ok := a.d[key]
	if !ok || v == nil {
		return 0, false
	}
	n, ok = toInt(v)
	if !ok {
		a.fail(key, "must be an integer, not %T %v", v, v)
	}
	return n, true
}

func toInt(v any) (int, bool) {
	switch x := v.(type) {
	case int:
		return x, true
	case int64:
		return int(x), x >= math.MinInt32 && x <= math.MaxInt32
	case int32:
		return int(x), true
	case uint16:
		return int(x), true
	case float64:
		if x == math.Trunc(x) && math.Abs(x) <= math.MaxInt32 {
			return int(x), true
		}
	}
	return 0, false
}

// strings returns a list of strings ([]any, []string).
func (a *dictArgs) strings(key string) []string {
	v, ok := a.d[key]
	if !ok || v == nil {
		return nil
	}
	switch x := v.(type) {
	case []string:
		return x
	case []any:
		out := make([]string, 0, len(x))
		for i, e := range x {
			s, ok := e.(string)
			if !ok {
				a.fail(key, "item %d must be a string, not %T", i, e)
				continue
			}
			out = append(out, s)
		}
		return out
	}
	a.fail(key, "must be a list of strings, not %T", v)
	return nil
}

// dict returns a nested dict.
func (a *dictArgs) dict(key string) map[string]any {
	v, ok := a.d[key]
	if !ok || v == nil {
		return nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		a.fail(key, "must be a dict, not %T", v)
	}
	return m
}

// scalarArg turns a template argument into a string: strings as they are,
// numbers and booleans formatted.
func scalarArg(fn, what string, v any) (string, error) {
	s, ok := store.ScalarString(v)
	if !ok {
		return "", fmt.Errorf("%s: %s must be a string, not %T", fn, what, v)
	}
	return s, nil
}
