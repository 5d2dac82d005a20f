package templating

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strings"
	"sync"
	"unsafe"

	"github.com/haptic-io/haptic/renderplan"
)

// Directories of the rendered tree, relative to the HAProxy base directory.
const (
	dirMaps    = "maps"
	dirCerts   = "certs"
	dirGeneral = "general"
)

// maxRenderDepth bounds nested render, renderGlob and memo calls.
const maxRenderDepth = 64

// RenderOptions are per-render knobs. The zero value is a plain render.
type RenderOptions struct {
	// ExtraContext keys override the config's extraContext (shallowly).
	ExtraContext map[string]any
	// Fresh renders as an engine's first render does: no renderEach item
	// is replayed and every service is resolved anew. The result is the
	// same either way; Fresh only costs time (benchmarks of a full render
	// use it). What a Fresh render finds is kept for the next render.
	Fresh bool
	// Trace, when set, is called when a template starts and ends (top-level
	// templates and every render, renderGlob item and memo miss) and around
	// the assembly ([TraceAssemble]). Callers that want timings read their
	// own clock in it.
	Trace func(TraceEvent)
}

// TraceAssemble is the Template of the trace events around the final
// assembly (token replacement and plan building); Bytes is then the size
// of the assembled haproxy.cfg.
const TraceAssemble = "(assemble)"

// TraceEvent is one template boundary reported to [RenderOptions.Trace].
type TraceEvent struct {
	Template string
	// Depth is 0 for top-level templates.
	Depth int
	// End is false when the template starts, true when it ended.
	End bool
	// Bytes is the size of the output at the end.
	Bytes int
}

// FailError is the error of a fail call in a template; errors.As finds it
// in the error [Engine.Render] returns.
type FailError struct{ Message string }

func (e *FailError) Error() string { return "fail: " + e.Message }

func fail(msg string) (string, error) { return "", &FailError{Message: msg} }

func toJSON(v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("toJSON: %w", err)
	}
	return string(b), nil
}

// Render compiles cfg and renders it once; see [Engine.Render].
func Render(ctx context.Context, cfg *Config, store Store) (*renderplan.Output, []Problem, error) {
	e, err := Compile(cfg)
	if err != nil {
		return nil, nil, err
	}
	return e.Render(ctx, store, RenderOptions{})
}

// Render renders the engine's templates against store into files and a
// plan. Templates run in this order, each seeing what the earlier ones
// recorded: haproxy.cfg, then the maps, files and sslCertificates
// templates, each group in name order. Bad user input becomes [Problem]s
// and the render goes on; so does a template error in a renderEach item
// (the item is left out, a [ReasonRenderFailed] problem names it). Any
// other template error (a missing key included), a fail call, a misuse of
// the author API or an invalid resulting plan is an error naming the
// template. Problems about a watched object carry its [ObjectRef]. Same
// engine, same store contents and same options give byte-identical files
// and the same plan ID.
//
// store must not change during the call (pass a [store.Snapshot]).
func (e *Engine) Render(ctx context.Context, store Store, opts RenderOptions) (*renderplan.Output, []Problem, error) {
	if store == nil {
		return nil, nil, errors.New("render: nil store")
	}
	r := newRenderState(ctx, e, store, opts)
	r.scratch = e.carry.takeScratch()
	defer func() { e.carry.putScratch(r.scratch) }()
	r.plans = e.carry.takePlans(opts.Fresh)
	planned := false
	defer func() { e.carry.putPlans(r.plans, planned) }()
	bound, err := e.acquireRender(r)
	if err != nil {
		return nil, nil, err
	}
	defer e.releaseRender(bound)
	r.tmpl = bound.tmpl

	for _, name := range e.maps {
		if _, err := r.registerMapLocked(name, e.cfg.Maps[name].Ordered); err != nil {
			return nil, nil, fmt.Errorf("render: %w", err)
		}
	}
	cfgText, err := r.top(templateConfig)
	if err != nil {
		return nil, nil, err
	}
	for _, name := range e.maps {
		text, err := r.top(prefixMap + name)
		if err != nil {
			return nil, nil, err
		}
		r.mapLines(name, text)
	}
	for _, name := range e.files {
		text, err := r.top(prefixFile + name)
		if err != nil {
			return nil, nil, err
		}
		reload := true
		if ft := e.cfg.Files[name]; ft.ReloadOnChange != nil {
			reload = *ft.ReloadOnChange
		}
		if _, err := r.addFile(dirGeneral, name, renderplan.FileGeneral, []byte(text), &reload); err != nil {
			return nil, nil, fmt.Errorf("render %s%s: %w", prefixFile, name, err)
		}
	}
	for _, name := range e.certs {
		text, err := r.top(prefixCert + name)
		if err != nil {
			return nil, nil, err
		}
		if strings.TrimSpace(text) == "" {
			continue
		}
		if _, err := r.certLocked(name, text, ""); err != nil {
			return nil, nil, fmt.Errorf("render %s%s: %w", prefixCert, name, err)
		}
	}
	if r.trace != nil {
		r.trace(TraceEvent{Template: TraceAssemble})
	}
	out, err := r.assemble(cfgText)
	if err != nil {
		return nil, nil, fmt.Errorf("render: %w", err)
	}
	planned = true
	if r.trace != nil {
		size := 0
		if f, ok := out.Plan.File(renderplan.ConfigPath); ok {
			size = f.Size
		}
		r.trace(TraceEvent{Template: TraceAssemble, End: true, Bytes: size})
	}
	r.e.carry.set(&renderCarry{marks: r.marks, servers: r.usedServers, hints: r.sizeHints()}, r.segNext)
	problems := sortProblems(r.problems)
	r.resolveRefs(problems)
	return out, problems, nil
}

// renderState is everything one render records. It belongs to the one
// goroutine running the render.
type renderState struct {
	ctx   context.Context
	e     *Engine
	store Store
	tmpl  *textTemplate
	data  map[string]any
	trace func(TraceEvent)
	depth int

	problems []Problem
	bound    renderBound // tuneBufsize (bounds.go)
	cache    map[string]any
	memo     map[memoKey]string

	backends     []renderplan.Backend
	beByName     map[string]int
	guids        map[string]string   // guid → backend name
	profiles     map[string][]string // name → lines
	profileCache profileCache        // backend profiles by their inputs
	mergeBuf     map[string]any      // backend's merged dicts
	// registries are claim's first-wins registries (each.go).
	registries map[string]map[string]any
	mapsByKey  map[string]*mapState
	files      map[string]*renderplan.FileContent // by path

	usedServers map[serversKey]*serversEntry // this render's resolutions, carried to the next
	slicesBySvc map[string][]map[string]any  // when the slice alias is not indexed by service
	// prev is what the engine's previous render left; hints, its sizes.
	prev  *renderCarry
	hints sizeHints
	// marks are where the Services and EndpointSlices stand in store (nil
	// when it is no ChangeTracker); prevMarks are those of the render that
	// left segPrev, prevServers its resolutions (both nil for a Fresh
	// render); delta, what changed in Services and EndpointSlices since
	// (servicesDelta).
	marks       *serviceMarks
	prevMarks   *serviceMarks
	prevServers prevResolutions
	delta       *servicesDelta
	// frozen holds the claimed dicts once a dict function asked (frozen.go).
	frozen map[unsafe.Pointer]bool
	// segPrev are the segments of the previous render's renderEach calls,
	// by call (this render owns them): its items' results and their fold;
	// segNext, this render's.
	segPrev, segNext []*segment
	// segBackends are the backends of the adopted segment that recorded
	// backends, nil when none (segment.go).
	segBackends *segBackends
	// adopted are the keys, in order, and values of adopted
	// registries (by the map's address): keys and values need not sort
	// them.
	adopted map[unsafe.Pointer]sortedRegistry
	scratch renderScratch
	// plans is the engine's plan cache while this render has it, nil if
	// another render has it (carry.go).
	plans *renderplan.Cache
}

// sortedRegistry is an adopted registry's keys in order and their
// values.
type sortedRegistry struct {
	keys []string
	vals []any
}

func newRenderState(ctx context.Context, e *Engine, store Store, opts RenderOptions) *renderState {
	extra := e.cfg.ExtraContext
	if len(opts.ExtraContext) > 0 {
		extra = mergeMap(mergeMap(nil, extra), opts.ExtraContext)
	}
	if extra == nil {
		extra = map[string]any{}
	}
	r := &renderState{
		ctx:        ctx,
		e:          e,
		store:      store,
		trace:      opts.Trace,
		cache:      map[string]any{},
		memo:       map[memoKey]string{},
		prev:       e.carry.get(),
		profiles:   map[string][]string{},
		registries: map[string]map[string]any{},
		mapsByKey:  map[string]*mapState{},
		files:      map[string]*renderplan.FileContent{},
		adopted:    map[unsafe.Pointer]sortedRegistry{},
	}
	if !opts.Fresh {
		r.prevMarks = r.prev.marks
		r.segPrev = e.carry.takeSegments()
		r.prevServers.own = r.prev.servers
		for _, s := range r.segPrev {
			if s != nil && s.fold != nil && len(s.fold.bes.servers) > 0 {
				r.prevServers.segs = append(r.prevServers.segs, s.fold.bes.servers)
			}
		}
	}
	if ct, ok := store.(ChangeTracker); ok && e.sliceIndexed {
		r.marks = &serviceMarks{services: ct.Mark(e.serviceAlias), slices: ct.Mark(e.sliceAlias)}
	}
	r.hints = r.prev.hints
	r.usedServers = make(map[serversKey]*serversEntry, len(r.prev.servers))
	r.beByName = make(map[string]int, r.hints.backends)
	r.guids = make(map[string]string, r.hints.backends)
	r.backends = make([]renderplan.Backend, 0, r.hints.backends)
	res := make(map[string]*Resources, len(e.resources))
	for alias := range e.resources {
		res[alias] = &Resources{alias: alias, store: store}
	}
	r.data = map[string]any{
		"resources":    res,
		"extraContext": extra,
		"cache":        &Cache{m: r.cache},
		"paths":        map[string]string{"maps": dirMaps, "certs": dirCerts, "general": dirGeneral},
	}
	return r
}

// top executes one top-level template with the root data.
func (r *renderState) top(name string) (string, error) {
	if err := r.ctx.Err(); err != nil {
		return "", fmt.Errorf("render %s: %w", name, err)
	}
	s, err := r.exec(name, r.data)
	if err != nil {
		return "", fmt.Errorf("render %s: %w", name, err)
	}
	return s, nil
}

func (r *renderState) exec(name string, data any) (string, error) {
	if r.depth >= maxRenderDepth {
		return "", fmt.Errorf("render %q: nesting deeper than %d", name, maxRenderDepth)
	}
	if r.trace != nil {
		r.trace(TraceEvent{Template: name, Depth: r.depth})
	}
	var buf *bytes.Buffer
	if n := len(r.scratch.bufs); n > 0 {
		buf, r.scratch.bufs = r.scratch.bufs[n-1], r.scratch.bufs[:n-1]
		buf.Reset()
	} else {
		buf = new(bytes.Buffer)
	}
	r.depth++
	err := r.tmpl.ExecuteTemplate(buf, name, data)
	r.depth--
	s := buf.String()
	r.scratch.bufs = append(r.scratch.bufs, buf)
	if r.trace != nil {
		r.trace(TraceEvent{Template: name, Depth: r.depth, End: true, Bytes: len(s)})
	}
	return s, err
}

// render "name" ctx: the snippet's output as a string.
func (r *renderState) render(name string, data any) (string, error) {
	if err := r.ctx.Err(); err != nil {
		return "", err
	}
	if r.tmpl.Lookup(name) == nil {
		return "", fmt.Errorf("render: no template %q", name)
	}
	return r.exec(name, data)
}

// renderGlob "prefix-*" ctx: the matching snippets, alphabetically,
// concatenated.
func (r *renderState) renderGlob(pattern string, data any) (string, error) {
	if err := r.ctx.Err(); err != nil {
		return "", err
	}
	names, err := r.globNames(pattern)
	if err != nil {
		return "", err
	}
	if len(names) == 1 {
		return r.exec(names[0], data) // no copy of a large output
	}
	var b strings.Builder
	for _, name := range names {
		s, err := r.exec(name, data)
		if err != nil {
			return "", err
		}
		b.WriteString(s)
	}
	return b.String(), nil
}

// globNames returns the snippet names matching pattern, in name order.
func (r *renderState) globNames(pattern string) ([]string, error) {
	if _, err := path.Match(pattern, ""); err != nil {
		return nil, fmt.Errorf("renderGlob %q: %w", pattern, err)
	}
	var names []string
	for _, name := range r.e.snippets {
		if ok, _ := path.Match(pattern, name); ok {
			names = append(names, name)
		}
	}
	return names, nil
}

// memo "name" key ctx: renders the snippet once per key and render.
func (r *renderState) memoRender(name, key string, data any) (string, error) {
	k := memoKey{name, key}
	if s, ok := r.memo[k]; ok {
		return s, nil
	}
	s, err := r.render(name, data)
	if err != nil {
		return "", err
	}
	r.memo[k] = s
	return s, nil
}

type memoKey struct{ name, key string }

func (r *renderState) cacheGet(key string) any { return r.cache[key] }

func (r *renderState) cacheSet(key string, v any) any {
	r.cache[key] = v
	return v
}

// problem object reason message: records a [Problem]; returns "".
func (r *renderState) problem(object, reason, message string) string {
	r.addProblem(object, reason, message)
	return ""
}

func (r *renderState) addProblem(object, reason, message string) {
	r.problems = append(r.problems, Problem{Object: object, Reason: reason, Message: message})
}

// Cache is the per-render cache, exposed to templates as .cache with Get
// and Set, and through cacheGet/cacheSet. It starts empty on every render.
type Cache struct{ m map[string]any }

// Get returns the value stored under key, or nil.
func (c *Cache) Get(key string) any { return c.m[key] }

// Set stores v under key and returns v.
func (c *Cache) Set(key string, v any) any {
	c.m[key] = v
	return v
}

// Resources is one watched-resource alias as templates see it:
// .resources.<alias>.List, .Get ns name, .Fetch key….
type Resources struct {
	alias string
	store Store
	// sorted keeps this render's ListBy results by expression; mu guards
	// it (renderEach snippets may call ListBy concurrently).
	mu     sync.Mutex
	sorted map[string][]map[string]any
}

// List returns all objects, sorted by namespace and name.
func (x *Resources) List() []map[string]any { return x.store.List(x.alias) }

// Get returns the object or nil.
func (x *Resources) Get(namespace, name string) map[string]any {
	o, _ := x.store.Get(x.alias, namespace, name)
	return o
}

// Fetch returns the objects whose indexBy values start with keys.
func (x *Resources) Fetch(keys ...string) []map[string]any { return x.store.Fetch(x.alias, keys...) }
