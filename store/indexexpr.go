package store

import (
	"fmt"
	"slices"
	"strconv"
)

// IndexExpr is a parsed field path into an unstructured object, such as
// metadata.namespace or metadata.labels["kubernetes.io/service-name"].
//
// Grammar: a first field name, then any number of ".name" or ["key"]
// steps. Names are [A-Za-z0-9_-]+ ; bracket keys are double- or
// single-quoted strings with Go escapes (strconv.Unquote rules for double
// quotes, no escapes in single quotes). Only map steps exist: there is no
// list indexing.
type IndexExpr struct {
	src  string
	path []string
}

// ParseIndexExpr parses one indexBy expression.
func ParseIndexExpr(s string) (IndexExpr, error) {
	var path []string
	i := 0
	readName := func() (string, error) {
		j := i
		for j < len(s) && isNameByte(s[j]) {
			j++
		}
		if j == i {
			return "", fmt.Errorf("index expression %q: expected a field name at offset %d", s, i)
		}
		n := s[i:j]
		i = j
		return n, nil
	}
	name, err := readName()
	if err != nil {
		return IndexExpr{}, err
	}
	path = append(path, name)
	for i < len(s) {
		switch s[i] {
		case '.':
			i++
			name, err := readName()
			if err != nil {
				return IndexExpr{}, err
			}
			path = append(path, name)
		case '[':
			i++
			if i >= len(s) || (s[i] != '"' && s[i] != '\'') {
				return IndexExpr{}, fmt.Errorf("index expression %q: expected a quoted key at offset %d", s, i)
			}
			q := s[i]
			j := i + 1
			for j < len(s) && s[j] != q {
				if s[j] == '\\' && q == '"' {
					j++
				}
				j++
			}
			if j >= len(s) {
				return IndexExpr{}, fmt.Errorf("index expression %q: unterminated key", s)
			}
			var key string
			if q == '"' {
				key, err = strconv.Unquote(s[i : j+1])
				if err != nil {
					return IndexExpr{}, fmt.Errorf("index expression %q: key %s: %w", s, s[i:j+1], err)
				}
			} else {
				key = s[i+1 : j]
			}
			i = j + 1
			if i >= len(s) || s[i] != ']' {
				return IndexExpr{}, fmt.Errorf("index expression %q: expected ] at offset %d", s, i)
			}
			i++
			path = append(path, key)
		default:
			return IndexExpr{}, fmt.Errorf("index expression %q: unexpected %q at offset %d", s, s[i], i)
		}
	}
	return IndexExpr{src: s, path: path}, nil
}

func isNameByte(c byte) bool {
	return c == '_' || c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// String returns the expression's source text.
func (e IndexExpr) String() string { return e.src }

// Path returns the map keys the expression walks, in order.
func (e IndexExpr) Path() []string { return append([]string(nil), e.path...) }

// Eval returns the scalar at the expression's path in obj as a string:
// strings as they are, integers in decimal, floats with strconv 'g',
// booleans as true/false. A missing field or a non-scalar value gives ""
// and false.
func (e IndexExpr) Eval(obj map[string]any) (string, bool) {
	var cur any = obj
	for _, k := range e.path {
		m, ok := cur.(map[string]any)
		if !ok {
			return "", false
		}
		cur, ok = m[k]
		if !ok {
			return "", false
		}
	}
	return ScalarString(cur)
}

// ScalarString returns the string an index compares for a scalar JSON
// value (a string, integer, float or bool); ok is false for anything else.
func ScalarString(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case int64:
		return strconv.FormatInt(x, 10), true
	case int:
		return strconv.Itoa(x), true
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64), true
	case bool:
		return strconv.FormatBool(x), true
	}
	return "", false
}

// SamePath reports whether e walks the same path as the expression src
// (`a.b` and `a["b"]` do); it is false when src does not parse.
func (e IndexExpr) SamePath(src string) bool {
	o, err := ParseIndexExpr(src)
	return err == nil && slices.Equal(e.path, o.path)
}
