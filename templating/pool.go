package templating

import "fmt"

// Renders reuse template clones: cloning the engine's template set and
// binding the per-render functions (next to sprig's ~200) costs about as
// much as rendering a hundred objects. A pooled clone's functions call
// through a holder that points at the render using it.

// renderHolder is the render a pooled clone's functions act on.
type renderHolder struct{ r *renderState }

// boundRender is a clone of the engine's templates bound to a holder.
type boundRender struct {
	tmpl *textTemplate
	h    *renderHolder
}

// acquireRender returns a clone whose functions act on r.
func (e *Engine) acquireRender(r *renderState) (*boundRender, error) {
	if b, ok := e.renderPool.Get().(*boundRender); ok {
		b.h.r = r
		return b, nil
	}
	tmpl, err := e.tmpl.Clone()
	if err != nil {
		return nil, fmt.Errorf("render: %w", err)
	}
	h := &renderHolder{r: r}
	tmpl.Funcs(h.funcs())
	return &boundRender{tmpl: tmpl, h: h}, nil
}

// releaseRender returns b to the pool once its render is over.
func (e *Engine) releaseRender(b *boundRender) {
	b.h.r = nil
	e.renderPool.Put(b)
}

func (h *renderHolder) funcs() funcMap {
	fm := h.renderFuncs()
	for name, f := range h.guardedDictFuncs() {
		fm[name] = f
	}
	return fm
}

func (h *renderHolder) renderFuncs() funcMap {
	return funcMap{
		"render":         func(name string, data any) (string, error) { return h.r.render(name, data) },
		"renderGlob":     func(pattern string, data any) (string, error) { return h.r.renderGlob(pattern, data) },
		"memo":           func(name, key string, data any) (string, error) { return h.r.memoRender(name, key, data) },
		"cacheGet":       func(key string) any { return h.r.cacheGet(key) },
		"cacheSet":       func(key string, v any) any { return h.r.cacheSet(key, v) },
		"problem":        func(object, reason, message string) string { return h.r.problem(object, reason, message) },
		"backend":        func(d map[string]any, more ...map[string]any) (string, error) { return h.r.backend(d, more...) },
		"backendServers": func(d map[string]any) ([]any, error) { return h.r.backendServers(d) },
		"registerMap":    func(d map[string]any) (string, error) { return h.r.registerMap(d) },
		"mapEntry": func(name string, key, value any, object ...string) (string, error) {
			return h.r.mapEntry(name, key, value, object...)
		},
		"file":           func(d map[string]any) (string, error) { return h.r.file(d) },
		"cert":           func(d map[string]any) (string, error) { return h.r.cert(d) },
		"crtList":        func(d map[string]any) (string, error) { return h.r.crtList(d) },
		"renderEach":     func(name string, list any) (string, error) { return h.r.renderEach(name, list) },
		"claim":          func(registry, key string, value any) string { return h.r.claim(registry, key, value) },
		"claimed":        func(registry string) map[string]any { return h.r.claimed(registry) },
		"tuneBufsize":    func(n any) (string, error) { return h.r.tuneBufsize(n) },
		"mapLineMax":     func(name string) int { return h.r.mapLineMax(name) },
		"crtListLineMax": func(name string) int { return h.r.crtListLineMax(name) },
		"keys":           func(dicts ...map[string]any) []string { return h.r.sortedMapKeys(dicts...) },
		"values":         func(d map[string]any) []any { return h.r.sortedMapValues(d) },
	}
}

// acquireFragment returns a renderEach worker for r: a pooled one (its
// clone's functions are bound to the fragment itself) or a new one.
func (e *Engine) acquireFragment(r *renderState, prints *cachePrints) (*fragment, error) {
	f, ok := e.fragPool.Get().(*fragment)
	if !ok {
		tmpl, err := e.tmpl.Clone()
		if err != nil {
			return nil, fmt.Errorf("renderEach: %w", err)
		}
		f = &fragment{tmpl: tmpl}
		tmpl.Funcs(f.funcs())
	}
	f.r, f.prints, f.depth = r, prints, r.depth+1
	return f, nil
}

// releaseFragment returns f to the pool once its effects were applied.
func (e *Engine) releaseFragment(f *fragment) {
	clear(f.ops)
	f.r, f.prints, f.ops, f.err, f.base = nil, nil, f.ops[:0], nil, 0
	f.deps, f.marks = f.deps[:0], f.marks[:0]
	f.out.Reset()
	e.fragPool.Put(f)
}
