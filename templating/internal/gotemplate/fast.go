// Copyright 2026 The HAPTIC Authors. Fast paths added to the fork of Go's
// text/template (see doc.go); they change speed, never results.

package gotemplate

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"text/template/parse"

	"github.com/haptic-io/haptic/templating/internal/gotemplate/internal/fmtsort"
)

var (
	mapStringAnyType   = reflect.TypeFor[map[string]any]()
	stringType         = reflect.TypeFor[string]()
	emptyInterfaceType = reflect.TypeFor[any]()
)

// fastMapField returns receiver[fieldName] for a map[string]any receiver
// as MapIndex would, minus the allocation of the key's interface and the
// method lookup (map[string]any has no methods). Nested objects come back
// as map-typed Values without allocating: every consumer in exec.go
// unwraps interfaces first, and map receivers never show their static
// type in an error. Other values come back interface-typed and not
// addressable, exactly like MapIndex's result, so error messages keep
// saying "interface {}". ok is false when the slow path must decide
// (other receiver types, missing keys).
func fastMapField(receiver reflect.Value, fieldName string) (reflect.Value, bool) {
	if receiver.Type() != mapStringAnyType || !receiver.CanInterface() {
		return reflect.Value{}, false
	}
	m, _ := receiver.Interface().(map[string]any)
	v, found := m[fieldName]
	if !found {
		return reflect.Value{}, false
	}
	if obj, isObj := v.(map[string]any); isObj && obj != nil {
		return reflect.ValueOf(obj), true
	}
	return reflect.ValueOf([1]any{v}).Index(0), true
}

// fastCall calls fun without reflect.Value.Call when its type is one of
// the common function types below and every argument converts; ok is
// false otherwise (nothing was called). The result is the value evalCall
// would return after unwrapping; a panic becomes the error, as in
// safeCall.
func fastCall(fun reflect.Value, args []reflect.Value) (v reflect.Value, ok bool, err error) {
	if !fun.CanInterface() {
		return reflect.Value{}, false, nil
	}
	defer func() {
		if r := recover(); r != nil {
			v, ok = reflect.Value{}, true
			if e, isErr := r.(error); isErr {
				err = e
			} else {
				err = fmt.Errorf("%v", r)
			}
		}
	}()
	switch f := fun.Interface().(type) {
	case func(string) string:
		if a, good := strArgs1(args); good {
			return reflect.ValueOf(f(a)), true, nil
		}
	case func(string, string) string:
		if a, b, good := strArgs2(args); good {
			return reflect.ValueOf(f(a, b)), true, nil
		}
	case func(string, string) bool:
		if a, b, good := strArgs2(args); good {
			return reflect.ValueOf(f(a, b)), true, nil
		}
	case func(string, string, string) string:
		if len(args) == 3 && isString(args[0]) && isString(args[1]) && isString(args[2]) {
			return reflect.ValueOf(f(args[0].String(), args[1].String(), args[2].String())), true, nil
		}
	case func(...any) string:
		if xs, good := anyArgs(args); good {
			return reflect.ValueOf(f(xs...)), true, nil
		}
	case func(...any) map[string]any:
		if xs, good := anyArgs(args); good {
			return reflect.ValueOf(f(xs...)), true, nil
		}
	case func(string, ...any) string:
		if len(args) >= 1 && isString(args[0]) {
			if xs, good := anyArgs(args[1:]); good {
				return reflect.ValueOf(f(args[0].String(), xs...)), true, nil
			}
		}
	case func(any) string:
		if len(args) == 1 && args[0].CanInterface() {
			return reflect.ValueOf(f(args[0].Interface())), true, nil
		}
	case func(map[string]any, string, any) map[string]any:
		if len(args) == 3 && isString(args[1]) && args[2].CanInterface() {
			if m, good := mapArg(args[0]); good {
				return reflect.ValueOf(f(m, args[1].String(), args[2].Interface())), true, nil
			}
		}
	case func(map[string]any, string, any) (map[string]any, error): // a guarded set
		if len(args) == 3 && isString(args[1]) && args[2].CanInterface() {
			if m, good := mapArg(args[0]); good {
				r, err := f(m, args[1].String(), args[2].Interface())
				return reflect.ValueOf(r), true, err
			}
		}
	case func(map[string]any) []any: // values
		if len(args) == 1 {
			if m, good := mapArg(args[0]); good {
				return reflect.ValueOf(f(m)), true, nil
			}
		}
	case func(string) any:
		if a, good := strArgs1(args); good {
			r := f(a)
			return reflect.ValueOf(&r).Elem(), true, nil // interface-typed, as Call returns it
		}
	case func(string, any) (string, error):
		if len(args) == 2 && isString(args[0]) && args[1].CanInterface() {
			s, err := f(args[0].String(), args[1].Interface())
			return reflect.ValueOf(s), true, err
		}
	case func(string, any, any, ...string) (string, error):
		if len(args) >= 3 && isString(args[0]) && args[1].CanInterface() && args[2].CanInterface() {
			rest := make([]string, 0, len(args)-3)
			for _, a := range args[3:] {
				if !isString(a) {
					return reflect.Value{}, false, nil
				}
				rest = append(rest, a.String())
			}
			s, err := f(args[0].String(), args[1].Interface(), args[2].Interface(), rest...)
			return reflect.ValueOf(s), true, err
		}
	case func(map[string]any, ...map[string]any) (string, error):
		if len(args) >= 1 {
			first, good := mapArg(args[0])
			if !good {
				return reflect.Value{}, false, nil
			}
			var more []map[string]any
			for _, a := range args[1:] {
				m, good := mapArg(a)
				if !good {
					return reflect.Value{}, false, nil
				}
				more = append(more, m)
			}
			s, err := f(first, more...)
			return reflect.ValueOf(s), true, err
		}
	case func(reflect.Value) bool: // not
		if a, good := valueArg(args, 0); good && len(args) == 1 {
			return reflect.ValueOf(f(a)), true, nil
		}
	case func(reflect.Value, ...reflect.Value) (bool, error): // eq, ne, lt, …
		if a, good := valueArg(args, 0); good {
			rest, good := valueArgs(args[1:])
			if good {
				b, err := f(a, rest...)
				return reflect.ValueOf(b), true, err
			}
		}
	case func(reflect.Value, ...reflect.Value) (reflect.Value, error): // index, slice
		if a, good := valueArg(args, 0); good {
			rest, good := valueArgs(args[1:])
			if good {
				// Call would return a Value holding r, which evalCall
				// unwraps to r itself.
				r, err := f(a, rest...)
				return r, true, err
			}
		}
	}
	return reflect.Value{}, false, nil
}

func isString(v reflect.Value) bool { return v.IsValid() && v.Kind() == reflect.String }

func strArgs1(args []reflect.Value) (string, bool) {
	if len(args) != 1 || !isString(args[0]) {
		return "", false
	}
	return args[0].String(), true
}

func strArgs2(args []reflect.Value) (string, string, bool) {
	if len(args) != 2 || !isString(args[0]) || !isString(args[1]) {
		return "", "", false
	}
	return args[0].String(), args[1].String(), true
}

func anyArgs(args []reflect.Value) ([]any, bool) {
	xs := make([]any, len(args))
	for i, a := range args {
		if !a.IsValid() || !a.CanInterface() {
			return nil, false
		}
		xs[i] = a.Interface()
	}
	return xs, true
}

func mapArg(v reflect.Value) (map[string]any, bool) {
	if !v.IsValid() || v.Type() != mapStringAnyType || !v.CanInterface() {
		return nil, false
	}
	m, ok := v.Interface().(map[string]any)
	return m, ok
}

func valueArg(args []reflect.Value, i int) (reflect.Value, bool) {
	if i >= len(args) || !args[i].IsValid() || args[i].Type() != reflectValueType {
		return reflect.Value{}, false
	}
	return args[i].Interface().(reflect.Value), true
}

func valueArgs(args []reflect.Value) ([]reflect.Value, bool) {
	out := make([]reflect.Value, len(args))
	for i := range args {
		v, ok := valueArg(args, i)
		if !ok {
			return nil, false
		}
		out[i] = v
	}
	return out, true
}

// fastBuiltin runs the builtins eq, ne, not and index with their arguments
// evaluated as evalArg would pass them, minus the boxing of every
// argument into a reflect.Value holding a reflect.Value (and the slice
// holding those). ok is false for any other call, or when the pipeline
// supplies the last argument; the caller then takes the general path.
// Argument counts were checked by evalCall.
func (s *state) fastBuiltin(dot reflect.Value, name string, node parse.Node, args []parse.Node, final reflect.Value) (reflect.Value, bool) {
	if !isMissing(final) {
		return reflect.Value{}, false
	}
	switch name {
	case "eq", "ne", "not", "index":
	case "print":
		return s.fastPrint(dot, args), true
	default:
		return reflect.Value{}, false
	}
	var buf [4]reflect.Value
	raw := buf[:0]
	for i, a := range args {
		if i == 1 && len(args) == 2 && name == "index" {
			if k, ok := a.(*parse.StringNode); ok {
				if v, ok := fastMapIndex(raw[0], k.Text); ok {
					return v, true
				}
			}
		}
		raw = append(raw, s.evalRawValueArg(dot, a))
	}
	var (
		v   reflect.Value
		err error
	)
	func() {
		defer func() {
			if r := recover(); r != nil {
				if e, isErr := r.(error); isErr {
					err = e
				} else {
					err = fmt.Errorf("%v", r)
				}
			}
		}()
		switch name {
		case "eq":
			var b bool
			switch len(raw) {
			case 2:
				b, err = eq(raw[0], raw[1])
			default:
				b, err = eq(raw[0], raw[1:]...)
			}
			v = reflect.ValueOf(b)
		case "ne":
			var b bool
			b, err = ne(raw[0], raw[1])
			v = reflect.ValueOf(b)
		case "not":
			v = reflect.ValueOf(not(raw[0]))
		case "index":
			v, err = index(raw[0], raw[1:]...)
		}
	}()
	if err != nil {
		s.at(node)
		s.errorf("error calling %s: %w", name, err)
	}
	return v, true
}

// fastMapIndex is index item "key" for a map[string]any item (how
// templates read an optional field), minus the boxing of the key and the
// copy of the element: the value as fastMapField returns a field, or the
// nil interface when the key is missing, as index gives it. ok is false
// for any other item.
func fastMapIndex(item reflect.Value, key string) (reflect.Value, bool) {
	if item.Kind() == reflect.Interface {
		item = item.Elem()
	}
	if !item.IsValid() || item.Type() != mapStringAnyType || !item.CanInterface() {
		return reflect.Value{}, false
	}
	if v, ok := fastMapField(item, key); ok {
		return v, true
	}
	return reflect.Zero(emptyInterfaceType), true
}

// evalRawValueArg is evalArg(dot, reflectValueType, n) without the final
// boxing: the reflect.Value the builtin receives.
func (s *state) evalRawValueArg(dot reflect.Value, n parse.Node) reflect.Value {
	s.at(n)
	var value reflect.Value
	switch arg := n.(type) {
	case *parse.DotNode:
		value = dot
	case *parse.NilNode:
		return reflect.Value{} // reflect.Zero(reflectValueType), unboxed
	case *parse.FieldNode:
		value = s.evalFieldNode(dot, arg, []parse.Node{n}, missingVal)
	case *parse.VariableNode:
		value = s.evalVariableNode(dot, arg, nil, missingVal)
	case *parse.PipeNode:
		value = s.evalPipeline(dot, arg)
	case *parse.IdentifierNode:
		value = s.evalFunction(dot, arg, arg, nil, missingVal)
	case *parse.ChainNode:
		value = s.evalChainNode(dot, arg, nil, missingVal)
	default:
		return s.evalEmptyInterface(dot, n)
	}
	// validateType(value, reflectValueType), then the builtin's view: an
	// invalid value becomes the zero reflect.Value (canBeNil).
	if !value.IsValid() {
		return reflect.Value{}
	}
	if value.Type() == reflectValueType {
		return value.Interface().(reflect.Value)
	}
	return value
}

// fastPrint is the builtin print (fmt.Sprint) with its arguments evaluated
// as evalCall would; when every argument is a string, Sprint's result is
// their concatenation (it only adds spaces between two non-strings), built
// without the []any and fmt's state.
func (s *state) fastPrint(dot reflect.Value, args []parse.Node) reflect.Value {
	var buf [8]reflect.Value
	vals := buf[:0]
	allStrings, size := true, 0
	for _, a := range args {
		v := s.evalArg(dot, emptyInterfaceType, a)
		vals = append(vals, v)
		if v.IsValid() && v.Type() == stringType { // not a named type: no String method
			size += v.Len()
		} else {
			allStrings = false
		}
	}
	if allStrings {
		var b strings.Builder
		b.Grow(size)
		for _, v := range vals {
			b.WriteString(v.String())
		}
		return reflect.ValueOf(b.String())
	}
	xs := make([]any, len(vals))
	for i, v := range vals {
		if v.IsValid() {
			xs[i] = v.Interface()
		}
	}
	return reflect.ValueOf(fmt.Sprint(xs...))
}

// newVars returns a variable stack holding $ with room for the variables
// of a typical template, so that declaring them does not grow it.
func newVars(dot reflect.Value) []variable {
	vars := make([]variable, 1, 64)
	vars[0] = variable{"$", dot}
	return vars
}

// sortedStringKeyed returns the entries of a map with string-kinded keys
// in key order: fmtsort.Sort's order, found by comparing strings.
func sortedStringKeyed(m reflect.Value) []fmtsort.KeyValue {
	type entry struct {
		k  string
		kv fmtsort.KeyValue
	}
	entries := make([]entry, 0, m.Len())
	it := m.MapRange()
	for it.Next() {
		k := it.Key()
		entries = append(entries, entry{k: k.String(), kv: fmtsort.KeyValue{Key: k, Value: it.Value()}})
	}
	slices.SortFunc(entries, func(a, b entry) int { return strings.Compare(a.k, b.k) })
	out := make([]fmtsort.KeyValue, len(entries))
	for i, e := range entries {
		out[i] = e.kv
	}
	return out
}
