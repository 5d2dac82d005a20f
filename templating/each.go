package templating

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"unsafe"
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
// renderGlob (run in the same item), cacheGet (read-only), backend and the
// stateless functions; the other author-API functions are errors there.
// Each item is the boundary of bad input: an item whose execution fails
// (a field of the wrong type, a missing key) is left out with whatever it
// wrote and recorded, a RenderFailed problem names it, and the other
// items render; a fail call, a misuse of the author API and the end of
// ctx still fail the render.
// Because one item's output and effects depend on that item, the cacheGet
// values it read and the Services and EndpointSlices its backends were
// resolved from, the engine replays items it rendered before instead of
// executing them again (eachmemo.go).
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
	prints := &cachePrints{r: r, salt: r.e.eachSalt.Add(1)}
	seg := r.segmentFor(name)
	check := r.checksFor(seg, prints)
	results := make([]*eachResult, len(items))
	from := make([]int, len(items)) // the old position of each item's result, or -1
	var missIdx []int
	var missItems []any
	match := prevMatcher{prev: seg.keys}
	for i, it := range items {
		from[i] = -1
		if key := itemPointer(it); key != nil {
			var next unsafe.Pointer
			if i+1 < len(items) {
				next = itemPointer(items[i+1])
			}
			if j := match.find(key, next); j >= 0 {
				if res := seg.results[j]; !check.needed(res) || r.replayable(res, prints) {
					results[i], from[i] = res, j
					continue
				}
			}
		}
		missIdx = append(missIdx, i)
		missItems = append(missItems, it)
	}
	if len(missItems) > 0 {
		fresh, err := r.executeEach(name, missItems, prints)
		if err != nil {
			return "", err
		}
		r.e.eachExecuted.Add(int64(len(missItems)))
		for j, res := range fresh {
			i := missIdx[j]
			results[i] = res
			if m, ok := items[i].(map[string]any); ok && m != nil && res.failed == nil {
				res.item, res.key = m, itemPointer(m)
			}
		}
	}
	removed := seg.replace(results, from, missIdx, prints)
	r.segNext = append(r.segNext, seg)
	folded := false
	if seg.skipFold || r.e.replayOnly {
		seg.skipFold, seg.fold = false, nil
	} else {
		folded = seg.update(r, results, removed, missIdx)
	}
	if folded && r.adoptable(seg.fold) {
		r.adopt(seg.fold)
		r.e.eachAdopted.Add(1)
		return seg.out, nil
	}
	for _, res := range results {
		if res.failed != nil {
			r.problems = append(r.problems, *res.failed)
			continue
		}
		if err := r.replayOps(res.ops); err != nil {
			return "", fmt.Errorf("renderEach %q: %w", name, err)
		}
	}
	return seg.out, nil
}

// segmentFor returns the segment of this renderEach call: the one the
// engine's previous render left for the same call (same snippet and
// depth), or a new one.
func (r *renderState) segmentFor(name string) *segment {
	k := len(r.segNext)
	if k < len(r.segPrev) {
		if s := r.segPrev[k]; s != nil && s.snippet == name && s.depth == r.depth && s.bufSize == r.fixBound() {
			r.segPrev[k] = nil
			return s
		}
	}
	return &segment{snippet: name, depth: r.depth, bufSize: r.fixBound()}
}

// replayable reports whether res, remembered from an earlier render, is
// what executing its item now would give: the cacheGet values it read
// have the same content and the maps it wrote to are registered.
func (r *renderState) replayable(res *eachResult, prints *cachePrints) bool {
	for _, d := range res.deps {
		// Items of one call read the same few keys: the last answer is
		// checked first, without the lock.
		if d.key == prints.lastKey {
			if d.fp != prints.lastFP {
				return false
			}
			continue
		}
		fp := prints.get(d.key)
		prints.lastKey, prints.lastFP = d.key, fp
		if fp != d.fp {
			return false
		}
	}
	for i := range res.ops {
		op := &res.ops[i]
		switch op.kind {
		case opMapEntry:
			if op.mapName == prints.lastMap {
				continue
			}
			if _, ok := r.mapsByKey[op.mapName]; !ok {
				return false
			}
			prints.lastMap = op.mapName
		case opBackend:
			// The servers must still come from the same objects.
			if k := op.be.svcKey; k != nil && !r.servicesDelta().unchanged(k.ns, k.svc) {
				svc, _ := r.store.Get(r.e.serviceAlias, k.ns, k.svc)
				if !op.be.svc.current(svc, r.slicesFor(k.ns, k.svc)) {
					return false
				}
			}
		}
	}
	return true
}

// executeEach runs the snippet over items on up to GOMAXPROCS workers and
// returns each item's result.
func (r *renderState) executeEach(name string, items []any, prints *cachePrints) ([]*eachResult, error) {
	workers := min(runtime.GOMAXPROCS(0), (len(items)+eachMinChunk-1)/eachMinChunk)
	if workers < 1 {
		workers = 1
	}
	frags := make([]*fragment, workers)
	for w := range frags {
		f, err := r.e.acquireFragment(r, prints)
		if err != nil {
			return nil, err
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
	first := func(w int) int { return w * len(items) / workers }
	run := func(w int) {
		f := frags[w]
		chunk := items[first(w):first(w+1)]
		if f.ops == nil {
			f.ops = make([]fragOp, 0, 4*len(chunk)) // a few effects per item
		}
		// One execution per chunk: "each:<name>" ranges over the chunk
		// and marks where each item starts, so the template state is set
		// up once and effects are still attributed to their item. An
		// item that fails is left out (its problem says why) and the
		// execution resumes after it.
		for f.base = 0; f.base < len(chunk); {
			if err := r.ctx.Err(); err != nil {
				f.err = err
				return
			}
			err := f.exec(&f.out, prefixEach+name, chunk[f.base:])
			if err == nil {
				if len(f.marks) != len(chunk) {
					f.err = fmt.Errorf("renderEach %q: %s is internal to renderEach", name, eachItemFunc)
				}
				return
			}
			k := len(f.marks) - 1 // the item that failed
			if k < f.base || !itemError(err) {
				f.err = err
				return
			}
			f.leaveOut(k, itemProblem(name, first(w)+k, chunk[k], err))
			f.base = k + 1
		}
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
	// the first item that failed the render.
	results := make([]*eachResult, 0, len(items))
	for _, f := range frags {
		if f.err != nil {
			return nil, f.err
		}
		results = f.split(results)
	}
	return results, nil
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
	r      *renderState // read-only while fragments run
	prints *cachePrints
	tmpl   *textTemplate
	depth  int
	out    bytes.Buffer
	ops    []fragOp
	// profiles and mergeBuf serve backend calls; profiles outlives
	// renders (a pooled fragment keeps it).
	profiles profileCache
	mergeBuf map[string]any
	deps     []cacheDep
	marks    []fragMark // where each item starts in out, ops and deps
	// base is the position in the chunk of the execution's first item.
	base int
	err  error
}

// fragMark is where one item's output, effects and reads start; failed
// is the problem of an item left out.
type fragMark struct {
	out, ops, deps int
	failed         *Problem
}

// eachItemFunc is the function the "each:" wrappers call before each item.
const eachItemFunc = "hapticEachItem"

type fragOpKind uint8

const (
	opMapEntry fragOpKind = iota
	opProblem
	opClaim
	opBackend
)

// fragOp is one recorded side effect.
type fragOp struct {
	kind    fragOpKind
	m       *mapState
	a, b, c string // map key, value, object; or problem object, reason, message; or registry, key
	val     any    // claim value
	be      *preparedBackend
}

func (f *fragment) funcs() funcMap {
	fm := funcMap{}
	for _, name := range renderFuncNames {
		fm[name] = func(...any) (string, error) {
			return "", &misuseError{fmt.Sprintf("%s cannot be called inside renderEach", name)}
		}
	}
	fm["render"] = f.render
	fm["renderGlob"] = f.renderGlob
	fm["cacheGet"] = f.cacheGet
	fm[eachItemFunc] = f.itemStart
	fm["problem"] = f.problem
	fm["mapEntry"] = f.mapEntry
	fm["claim"] = f.claim
	fm["backend"] = f.backend
	return fm
}

func (f *fragment) exec(w *bytes.Buffer, name string, data any) error {
	if f.depth >= maxRenderDepth {
		return &misuseError{fmt.Sprintf("render %q: nesting deeper than %d", name, maxRenderDepth)}
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

func (f *fragment) cacheGet(key string) any {
	f.deps = append(f.deps, cacheDep{key: key, fp: f.prints.get(key)})
	return f.r.cacheGet(key)
}

// itemStart marks the start of the i-th item of the execution (the
// base+i-th of the chunk); anything but the wrapper's own sequential
// calls is refused.
func (f *fragment) itemStart(i int) (string, error) {
	// The wrapper runs one exec below the fragment's own depth; snippets
	// (and the renders they call) run deeper.
	if f.base+i != len(f.marks) || f.depth != f.r.depth+2 {
		return "", &misuseError{eachItemFunc + " is internal to renderEach"}
	}
	f.marks = append(f.marks, fragMark{out: f.out.Len(), ops: len(f.ops), deps: len(f.deps)})
	return "", nil
}

// leaveOut drops what the k-th item of the chunk, the last one started,
// wrote and recorded, and marks it failed with p.
func (f *fragment) leaveOut(k int, p Problem) {
	m := &f.marks[k]
	f.out.Truncate(m.out)
	clear(f.ops[m.ops:])
	f.ops = f.ops[:m.ops]
	f.deps = f.deps[:m.deps]
	m.failed = &p
}

// misuseError is a misuse of the author API inside renderEach: a bug of
// the templates whatever the item, so it fails the render rather than
// the item.
type misuseError struct{ msg string }

func (e *misuseError) Error() string { return e.msg }

// itemError reports whether err, which an item's execution returned, is
// the item's own problem: any template error but a fail call, a misuse
// of the author API and the end of the render's context.
func itemError(err error) bool {
	var fe *FailError
	var me *misuseError
	return !errors.As(err, &fe) && !errors.As(err, &me) &&
		!errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded)
}

// maxItemMessage bounds the message of a RenderFailed problem: template
// errors quote the value they failed on, which an object can make large,
// and the message is logged on every render.
const maxItemMessage = 1024

// itemProblem is the problem of the i-th item of a renderEach "snippet"
// call whose execution failed with err. It names the item when it is an
// object (apiVersion, kind, metadata) or carries one as "object" (the
// backend and claim dicts of the libraries), else by its position.
func itemProblem(snippet string, i int, item any, err error) Problem {
	msg := err.Error()
	if len(msg) > maxItemMessage {
		msg = strings.ToValidUTF8(msg[:maxItemMessage], "") + "…"
	}
	p := Problem{Reason: ReasonRenderFailed, Message: msg}
	m, _ := item.(map[string]any)
	if ref, ok := objectRefOf(m); ok {
		p.Object, p.Ref = ref.String(), ref
	} else if obj, _ := m["object"].(string); obj != "" {
		p.Object = obj
	} else {
		p.Object = fmt.Sprintf("renderEach %q item %d", snippet, i)
	}
	return p
}

// split appends one result per item of the fragment's chunk to results.
func (f *fragment) split(results []*eachResult) []*eachResult {
	out := f.out.String()
	end := fragMark{out: len(out), ops: len(f.ops), deps: len(f.deps)}
	for i, m := range f.marks {
		next := end
		if i+1 < len(f.marks) {
			next = f.marks[i+1]
		}
		if m.failed != nil {
			// No output, effects or reads: the item runs again in the next
			// render (renderEach never matches a result without a key).
			results = append(results, &eachResult{failed: m.failed, static: []Problem{*m.failed}})
			continue
		}
		res := &eachResult{out: out[m.out:next.out]}
		if n := next.ops - m.ops; n > 0 {
			res.ops = make([]memoOp, n)
			for j, op := range f.ops[m.ops:next.ops] {
				if op.m != nil {
					res.ops[j].mapName = op.m.name
					// Checked once here, in the worker, not on every replay.
					res.ops[j].invalidReason, res.ops[j].invalid = entryProblem(op.m.name, op.a, op.b, f.r.bound.bufSize)
					op.m = nil // map states belong to this render
				}
				res.ops[j].fragOp = op
			}
		}
		res.static = staticProblems(res.ops)
		for _, d := range f.deps[m.deps:next.deps] {
			if !slices.Contains(res.deps, d) {
				res.deps = append(res.deps, d)
			}
		}
		results = append(results, res)
	}
	return results
}

// backend prepares a backend in the item and records it; the render adds
// it when it applies the item's effects. The token names the backend, so
// that the item's output stays valid when a later render replays it.
func (f *fragment) backend(d map[string]any, more ...map[string]any) (string, error) {
	var resolve resolver
	if f.r.e.watchesServices() {
		resolve = f.resolve
	}
	p, err := prepareBackend(d, more, &f.mergeBuf, resolve, &f.profiles)
	if err != nil {
		return "", err
	}
	f.ops = append(f.ops, fragOp{kind: opBackend, be: p})
	if p.refused() {
		return "", nil
	}
	return namedBackendToken(p.name, p.guid), nil
}

func (f *fragment) resolve(key serversKey) *serversEntry {
	r := f.r
	return resolveCached(r.e, r.store, &r.prevServers, scanSlicesFor(r.e, r.store, key.ns, key.svc), key)
}

// replayOps applies an item's effects, as its calls would have in a
// sequential render.
func (r *renderState) replayOps(ops []memoOp) error {
	for i := range ops {
		op := &ops[i]
		switch op.kind {
		case opMapEntry:
			if op.invalid != "" {
				r.addProblem(op.c, op.invalidReason, op.invalid)
			} else {
				r.addCheckedEntry(r.mapsByKey[op.mapName], op.a, op.b, op.c)
			}
		case opProblem:
			r.addProblem(op.a, op.b, op.c)
		case opClaim:
			r.claim(op.a, op.b, op.val)
		case opBackend:
			if _, _, err := r.addBackend(op.be); err != nil {
				return err
			}
		}
	}
	return nil
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
		reg = make(map[string]any, r.hints.sizes[registry])
		r.registries[registry] = reg
	}
	if _, taken := reg[key]; !taken {
		reg[key] = value
		if r.frozen != nil {
			freeze(r.frozen, value)
		}
	}
	return ""
}

func (r *renderState) claimed(registry string) map[string]any {
	reg := r.registries[registry]
	if reg == nil {
		reg = make(map[string]any, r.hints.sizes[registry])
		r.registries[registry] = reg
	}
	return reg
}
