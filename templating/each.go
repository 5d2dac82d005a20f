package templating

import (
	"bytes"
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"sync"

	template "github.com/haptic-io/haptic/templating/internal/gotemplate"
)

// eachMinChunk is the fewest items a renderEach worker takes: below it,
// a goroutine costs more than it saves.
const eachMinChunk = 64

// renderEach "snippet" list renders the snippet once per item (dot = the
// item) and returns the outputs concatenated in list order. Items are
// rendered in parallel on up to GOMAXPROCS goroutines; a snippet's side
// effects (mapEntry, problem, claim) are recorded per item and applied
// afterwards in list order, so the result is the same as a sequential
// range, whatever the parallelism. Inside, a snippet may call render and
// renderGlob (run in the same item), cacheGet (read-only) and the
// stateless functions; the other author-API functions are errors there.
// It is also the unit a later per-object re-render reuses: one item's
// output and recorded effects depend on that item (and read-only state)
// alone.
func (r *renderState) renderEach(name string, list any) (string, error) {
	if err := r.ctx.Err(); err != nil {
		return "", err
	}
	if r.tmpl.Lookup(name) == nil {
		return "", fmt.Errorf("renderEach: no template %q", name)
	}
	items, err := eachItems(list)
	if err != nil {
		return "", err
	}
	if r.depth >= maxRenderDepth {
		return "", fmt.Errorf("renderEach %q: nesting deeper than %d", name, maxRenderDepth)
	}
	workers := min(runtime.GOMAXPROCS(0), (len(items)+eachMinChunk-1)/eachMinChunk)
	if workers < 1 {
		workers = 1
	}
	frags := make([]*fragment, workers)
	for w := range frags {
		f, err := r.e.acquireFragment(r)
		if err != nil {
			return "", err
		}
		frags[w] = f
	}
	defer func() {
		for _, f := range frags {
			if f != nil {
				r.e.releaseFragment(f)
			}
		}
	}()
	run := func(w int) {
		f := frags[w]
		chunk := items[w*len(items)/workers : (w+1)*len(items)/workers]
		if err := r.ctx.Err(); err != nil {
			f.err = err
			return
		}
		// One execution per chunk: "each:<name>" ranges over the chunk
		// and calls the snippet per item, so side effects are recorded in
		// item order and the template state is set up once.
		if f.ops == nil {
			f.ops = make([]fragOp, 0, 4*len(chunk)) // a few effects per item
		}
		f.err = f.exec(&f.out, prefixEach+name, chunk)
	}
	if workers == 1 {
		run(0)
	} else {
		var wg sync.WaitGroup
		for w := range workers {
			wg.Go(func() { run(w) })
		}
		wg.Wait()
	}
	// Chunks are contiguous and in order: the first failing chunk holds
	// the first failing item.
	for _, f := range frags {
		if f.err != nil {
			return "", f.err
		}
	}
	var out strings.Builder
	size := 0
	for _, f := range frags {
		size += f.out.Len()
	}
	out.Grow(size)
	for _, f := range frags {
		r.applyOps(f.ops)
		out.Write(f.out.Bytes())
	}
	return out.String(), nil
}

func eachItems(list any) ([]any, error) {
	switch l := list.(type) {
	case nil:
		return nil, nil
	case []any:
		return l, nil
	case []map[string]any:
		items := make([]any, len(l))
		for i, o := range l {
			items[i] = o
		}
		return items, nil
	}
	if v := reflect.ValueOf(list); v.Kind() == reflect.Slice || v.Kind() == reflect.Array {
		items := make([]any, v.Len())
		for i := range items {
			items[i] = v.Index(i).Interface()
		}
		return items, nil
	}
	return nil, fmt.Errorf("renderEach: want a list, not %T", list)
}

// fragment is one renderEach worker: its own template clone with
// functions that record instead of changing the render.
type fragment struct {
	r     *renderState // read-only while fragments run
	tmpl  *template.Template
	depth int
	out   bytes.Buffer
	ops   []fragOp
	err   error
}

type fragOpKind uint8

const (
	opMapEntry fragOpKind = iota
	opProblem
	opClaim
)

// fragOp is one recorded side effect.
type fragOp struct {
	kind    fragOpKind
	m       *mapState
	a, b, c string // map key, value, object; or problem object, reason, message; or registry, key
	val     any    // claim value
}

func (f *fragment) funcs() template.FuncMap {
	fm := template.FuncMap{}
	for _, name := range renderFuncNames {
		fm[name] = func(...any) (string, error) {
			return "", fmt.Errorf("%s cannot be called inside renderEach", name)
		}
	}
	fm["render"] = f.render
	fm["renderGlob"] = f.renderGlob
	fm["cacheGet"] = func(key string) any { return f.r.cacheGet(key) }
	fm["problem"] = f.problem
	fm["mapEntry"] = f.mapEntry
	fm["claim"] = f.claim
	return fm
}

func (f *fragment) exec(w *bytes.Buffer, name string, data any) error {
	if f.depth >= maxRenderDepth {
		return fmt.Errorf("render %q: nesting deeper than %d", name, maxRenderDepth)
	}
	f.depth++
	err := f.tmpl.ExecuteTemplate(w, name, data)
	f.depth--
	return err
}

func (f *fragment) render(name string, data any) (string, error) {
	if f.tmpl.Lookup(name) == nil {
		return "", fmt.Errorf("render: no template %q", name)
	}
	var b bytes.Buffer
	err := f.exec(&b, name, data)
	return b.String(), err
}

func (f *fragment) renderGlob(pattern string, data any) (string, error) {
	names, err := f.r.globNames(pattern)
	if err != nil {
		return "", err
	}
	var b bytes.Buffer
	for _, name := range names {
		if err := f.exec(&b, name, data); err != nil {
			return "", err
		}
	}
	return b.String(), nil
}

func (f *fragment) problem(object, reason, message string) string {
	f.ops = append(f.ops, fragOp{kind: opProblem, a: object, b: reason, c: message})
	return ""
}

func (f *fragment) mapEntry(name string, key, value any, object ...string) (string, error) {
	m, k, v, obj, err := f.r.mapEntryArgs(name, key, value, object)
	if err != nil {
		return "", err
	}
	f.ops = append(f.ops, fragOp{kind: opMapEntry, m: m, a: k, b: v, c: obj})
	return "", nil
}

func (f *fragment) claim(registry, key string, value any) string {
	f.ops = append(f.ops, fragOp{kind: opClaim, a: registry, b: key, val: value})
	return ""
}

// applyOps applies recorded side effects in order, as the calls would
// have in a sequential render.
func (r *renderState) applyOps(ops []fragOp) {
	for i := range ops {
		op := &ops[i]
		switch op.kind {
		case opMapEntry:
			r.addEntry(op.m, op.a, op.b, op.c)
		case opProblem:
			r.addProblem(op.a, op.b, op.c)
		case opClaim:
			r.claim(op.a, op.b, op.val)
		}
	}
}

// claim "registry" key value records value under key in the named
// registry unless the key is already there (the first claim wins), and
// returns "". claimed "registry" returns the registry (key → value; empty
// when nothing was claimed). Registries let renderEach snippets collect
// what several items share (one backend per Service port) without
// writing shared state.
func (r *renderState) claim(registry, key string, value any) string {
	reg := r.registries[registry]
	if reg == nil {
		reg = map[string]any{}
		r.registries[registry] = reg
	}
	if _, taken := reg[key]; !taken {
		reg[key] = value
	}
	return ""
}

func (r *renderState) claimed(registry string) map[string]any {
	reg := r.registries[registry]
	if reg == nil {
		reg = map[string]any{}
		r.registries[registry] = reg
	}
	return reg
}
