package templating

import (
	"fmt"
	"reflect"
	"unsafe"

	"github.com/Masterminds/sprig/v3"
)

// Values passed to claim are read-only: the engine replays the renderEach
// item that claimed one in later renders, handing out the very same value
// again, so a change made to it would leak into them. sprig's functions
// that modify a dict in place refuse a claimed one with a clear error
// instead. The check costs nothing until the first such call in a render.

// guardedDictFuncs are sprig's in-place dict functions, refusing claimed
// values.
func (h *renderHolder) guardedDictFuncs() funcMap {
	sf := sprig.TxtFuncMap()
	merge := sf["merge"].(func(map[string]any, ...map[string]any) any)
	mergeOverwrite := sf["mergeOverwrite"].(func(map[string]any, ...map[string]any) any)
	mustMerge := sf["mustMerge"].(func(map[string]any, ...map[string]any) (any, error))
	mustMergeOverwrite := sf["mustMergeOverwrite"].(func(map[string]any, ...map[string]any) (any, error))
	return funcMap{
		"set": func(d map[string]any, key string, v any) (map[string]any, error) {
			if err := h.r.mutable("set", d); err != nil {
				return nil, err
			}
			d[key] = v
			return d, nil
		},
		"unset": func(d map[string]any, key string) (map[string]any, error) {
			if err := h.r.mutable("unset", d); err != nil {
				return nil, err
			}
			delete(d, key)
			return d, nil
		},
		"merge": func(dst map[string]any, srcs ...map[string]any) (any, error) {
			if err := h.r.mutable("merge", dst); err != nil {
				return nil, err
			}
			return merge(dst, srcs...), nil
		},
		"mergeOverwrite": func(dst map[string]any, srcs ...map[string]any) (any, error) {
			if err := h.r.mutable("mergeOverwrite", dst); err != nil {
				return nil, err
			}
			return mergeOverwrite(dst, srcs...), nil
		},
		"mustMerge": func(dst map[string]any, srcs ...map[string]any) (any, error) {
			if err := h.r.mutable("mustMerge", dst); err != nil {
				return nil, err
			}
			return mustMerge(dst, srcs...)
		},
		"mustMergeOverwrite": func(dst map[string]any, srcs ...map[string]any) (any, error) {
			if err := h.r.mutable("mustMergeOverwrite", dst); err != nil {
				return nil, err
			}
			return mustMergeOverwrite(dst, srcs...)
		},
	}
}

// mutable refuses d when it is, or is inside, a claimed value.
func (r *renderState) mutable(fn string, d map[string]any) error {
	if r.frozen == nil {
		r.frozen = map[unsafe.Pointer]bool{}
		for _, reg := range r.registries {
			for _, v := range reg {
				freeze(r.frozen, v)
			}
		}
	}
	if d == nil {
		return nil
	}
	p := reflect.ValueOf(d).UnsafePointer()
	if r.frozen[p] {
		return fmt.Errorf("%s: the dict was passed to claim and is read-only (later renders hand it out again); change a copy (deepCopy)", fn)
	}
	for name, reg := range r.registries {
		if reflect.ValueOf(reg).UnsafePointer() == p {
			return fmt.Errorf("%s: the dict is the registry %q, which only claim changes; change a copy (deepCopy)", fn, name)
		}
	}
	return nil
}

// freeze adds the dicts in v (v itself and those nested in dicts and
// lists) to frozen.
func freeze(frozen map[unsafe.Pointer]bool, v any) {
	switch x := v.(type) {
	case map[string]any:
		if x == nil {
			return
		}
		p := reflect.ValueOf(x).UnsafePointer()
		if frozen[p] {
			return
		}
		frozen[p] = true
		for _, e := range x {
			freeze(frozen, e)
		}
	case []any:
		for _, e := range x {
			freeze(frozen, e)
		}
	}
}
