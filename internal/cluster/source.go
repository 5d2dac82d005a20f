package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"

	"github.com/haptic-io/haptic/internal/controller"
	"github.com/haptic-io/haptic/store"
	"github.com/prometheus/client_golang/prometheus"
)

// Watch is one watched resource as the informer source lists it.
type Watch struct {
	// Alias is the watched-resource alias the objects are filed under.
	Alias string
	// APIVersion ("group/version", "v1") and Resource (plural) name the
	// resource.
	APIVersion, Resource string
	// Namespace scopes the watch; empty watches every namespace.
	Namespace string
	// LabelSelector is sent to the apiserver (server-side filtering).
	LabelSelector string
	// FieldSelector is applied by the source to every object
	// (client-side: the apiserver supports field selectors on few fields
	// of few resources). An object that stops matching is deleted.
	FieldSelector string
	// Debounce, when positive, batches the resource's changes: the first
	// change after a quiet Debounce goes to the loop at once (leading
	// edge), the changes that follow within Debounce go together when it
	// ends. Zero sends every change at once.
	Debounce time.Duration
}

// quietStatus are the aliases of ws whose .status HAPTIC writes: the
// Ingresses and the Gateway API kinds (see controller.Config.QuietStatus).
func quietStatus(ws []Watch) []string {
	var out []string
	for _, w := range ws {
		gv, err := schema.ParseGroupVersion(w.APIVersion)
		if err != nil {
			continue
		}
		if gv.Group == gatewayGroup || (gv.Group == "networking.k8s.io" && w.Resource == "ingresses") {
			out = append(out, w.Alias)
		}
	}
	return out
}

// SourceConfig configures a [Source].
type SourceConfig struct {
	// Client lists and watches the resources. Required.
	Client dynamic.Interface
	// Watches are the resources, one informer each. Required.
	Watches []Watch
	// Log receives source problems; nil discards.
	Log *slog.Logger
	// Events counts the notifications by alias and type (add, update,
	// delete); nil counts nothing.
	Events *prometheus.CounterVec
}

// NewWatchEventsCounter returns the counter of [SourceConfig].Events,
// registered with reg.
func NewWatchEventsCounter(reg prometheus.Registerer) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "haptic_watch_events_total",
		Help: "Notifications of the informers, by watched-resource alias and type (add, update, delete).",
	}, []string{"resource", "type"})
	reg.MustRegister(c)
	return c
}

// Source is the Kubernetes informer source of the controller loop: one
// informer per watched resource, each object delivered as a
// [controller.Change] under its alias, and one Initialized event once
// every informer has listed and its handler has delivered the listing,
// so that the first render never sees a half-listed world.
//
// Objects reach the loop without metadata.managedFields and without the
// kubectl last-applied annotation: templates have no use for them and
// they are often most of an object's size. The informers' objects share
// the values they hold equal (see compactor): they are read-only.
type Source struct {
	cfg     SourceConfig
	gvrs    []schema.GroupVersionResource
	labels  []labels.Selector
	fields  []fieldFilter
	compact *compactor

	mu      sync.Mutex
	indexes map[string]cache.Indexer // guarded by mu; by alias, once Run started
}

// fieldFilter is a parsed client-side field selector with the paths of
// the fields it reads.
type fieldFilter struct {
	sel   fields.Selector
	paths map[string]store.IndexExpr
}

// NewSource checks cfg (resources, selectors) and returns a source.
func NewSource(cfg SourceConfig) (*Source, error) {
	if cfg.Client == nil {
		return nil, errors.New("informer source: missing Client")
	}
	if len(cfg.Watches) == 0 {
		return nil, errors.New("informer source: no Watches")
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	s := &Source{cfg: cfg, compact: newCompactor()}
	var errs []error
	for _, w := range cfg.Watches {
		gv, err := schema.ParseGroupVersion(w.APIVersion)
		if err != nil {
			errs = append(errs, fmt.Errorf("watch %q: apiVersion %q: %w", w.Alias, w.APIVersion, err))
			continue
		}
		if w.Resource == "" || w.Alias == "" {
			errs = append(errs, fmt.Errorf("watch %q: alias and resource are required", w.Alias))
			continue
		}
		ls, err := labels.Parse(w.LabelSelector)
		if err != nil {
			errs = append(errs, fmt.Errorf("watch %s: labelSelector: %w", w.Alias, err))
			continue
		}
		ff, err := parseFieldFilter(w.FieldSelector)
		if err != nil {
			errs = append(errs, fmt.Errorf("watch %s: fieldSelector: %w", w.Alias, err))
			continue
		}
		s.gvrs = append(s.gvrs, gv.WithResource(w.Resource))
		s.labels = append(s.labels, ls)
		s.fields = append(s.fields, ff)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("informer source: %w", err)
	}
	return s, nil
}

func parseFieldFilter(s string) (fieldFilter, error) {
	if s == "" {
		return fieldFilter{}, nil
	}
	sel, err := fields.ParseSelector(s)
	if err != nil {
		return fieldFilter{}, err
	}
	ff := fieldFilter{sel: sel, paths: map[string]store.IndexExpr{}}
	for _, r := range sel.Requirements() {
		x, err := store.ParseIndexExpr(r.Field)
		if err != nil {
			return fieldFilter{}, fmt.Errorf("field %q: %w", r.Field, err)
		}
		ff.paths[r.Field] = x
	}
	return ff, nil
}

// matches reports whether obj passes the filter (always, without one).
func (f fieldFilter) matches(obj map[string]any) bool {
	if f.sel == nil {
		return true
	}
	set := make(fields.Set, len(f.paths))
	for name, x := range f.paths {
		v, _ := x.Eval(obj)
		set[name] = v
	}
	return f.sel.Matches(set)
}

// Run starts the informers and delivers their changes until ctx ends.
func (s *Source) Run(ctx context.Context, events chan<- controller.Event) error {
	var synced []cache.InformerSynced
	var handlers []*handler
	for i, w := range s.cfg.Watches {
		inf := s.informer(i)
		h := &handler{alias: w.Alias, filter: s.fields[i], events: events, ctx: ctx, log: s.cfg.Log, hold: w.Debounce, counts: s.cfg.Events}
		handlers = append(handlers, h)
		reg, err := inf.AddEventHandler(h)
		if err != nil {
			return fmt.Errorf("informer source %s: %w", w.Alias, err)
		}
		synced = append(synced, reg.HasSynced)
		s.mu.Lock()
		if s.indexes == nil {
			s.indexes = map[string]cache.Indexer{}
		}
		s.indexes[w.Alias] = inf.GetIndexer()
		s.mu.Unlock()
		go inf.RunWithContext(ctx)
	}
	if !cache.WaitForCacheSync(ctx.Done(), synced...) {
		return ctx.Err()
	}
	for _, h := range handlers {
		h.listed() // from now on its debounce holds changes
	}
	select {
	case events <- controller.Event{Initialized: true, Origin: "informers synced"}:
	case <-ctx.Done():
		return ctx.Err()
	}
	<-ctx.Done()
	return ctx.Err()
}

// Objects returns the objects of alias as the informer holds them (the
// field selector not applied): read-only, for status writers.
func (s *Source) Objects(alias string) []*unstructured.Unstructured {
	s.mu.Lock()
	idx := s.indexes[alias]
	s.mu.Unlock()
	if idx == nil {
		return nil
	}
	var out []*unstructured.Unstructured
	for _, o := range idx.List() {
		if u, ok := o.(*unstructured.Unstructured); ok {
			out = append(out, u)
		}
	}
	return out
}

// informer returns the informer of watch i: namespace scope and label
// selector server-side, the object trimmed and compacted before it is
// cached.
func (s *Source) informer(i int) cache.SharedIndexInformer {
	w, gvr := s.cfg.Watches[i], s.gvrs[i]
	ri := s.cfg.Client.Resource(gvr)
	var rc dynamic.ResourceInterface = ri
	if w.Namespace != "" {
		rc = ri.Namespace(w.Namespace)
	}
	sel := s.labels[i].String()
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.LabelSelector = sel
			return rc.List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.LabelSelector = sel
			return rc.Watch(ctx, o)
		},
	}
	inf := cache.NewSharedIndexInformer(lw, &unstructured.Unstructured{}, 0, cache.Indexers{})
	_ = inf.SetTransform(s.transform) // fails only once the informer runs
	return inf
}

// transform is what the informers cache of an object: trimmed, then
// compacted.
func (s *Source) transform(obj any) (any, error) {
	obj, err := trim(obj)
	if u, ok := obj.(*unstructured.Unstructured); ok && err == nil {
		u.Object = s.compact.compact(u.Object)
	}
	return obj, err
}

// trim drops what templates never read from an object before the
// informer caches it.
func trim(obj any) (any, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj, nil
	}
	md, _ := u.Object["metadata"].(map[string]any)
	delete(md, "managedFields")
	if ann, ok := md["annotations"].(map[string]any); ok {
		delete(ann, "kubectl.kubernetes.io/last-applied-configuration")
		if len(ann) == 0 {
			delete(md, "annotations")
		}
	}
	return u, nil
}

// handler turns one informer's notifications into loop events.
type handler struct {
	alias  string
	filter fieldFilter
	events chan<- controller.Event
	ctx    context.Context
	log    *slog.Logger
	hold   time.Duration
	counts *prometheus.CounterVec

	mu       sync.Mutex
	holding  bool                         // guarded by mu; the listing was delivered and hold > 0
	pending  map[string]controller.Change // guarded by mu; held changes by namespace/name
	timer    *time.Timer                  // guarded by mu; set while changes are held
	lastSent time.Time                    // guarded by mu
}

var _ cache.ResourceEventHandler = (*handler)(nil)

func (h *handler) count(typ string) {
	if h.counts != nil {
		h.counts.WithLabelValues(h.alias, typ).Inc()
	}
}

func (h *handler) OnAdd(obj any, _ bool) { h.count("add"); h.upsert(obj) }

func (h *handler) OnUpdate(_, obj any) { h.count("update"); h.upsert(obj) }

func (h *handler) OnDelete(obj any) {
	h.count("delete")
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return
	}
	h.send(controller.Change{Alias: h.alias, Namespace: u.GetNamespace(), Name: u.GetName()})
}

func (h *handler) upsert(obj any) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return
	}
	c := controller.Change{Alias: h.alias, Namespace: u.GetNamespace(), Name: u.GetName()}
	if h.filter.matches(u.Object) {
		c.Object = u.Object // the informer's cached copy: read-only from here on
	}
	h.send(c)
}

// listed marks the end of the initial listing, which is never held.
func (h *handler) listed() {
	h.mu.Lock()
	h.holding = h.hold > 0
	h.mu.Unlock()
}

// send delivers c at once, or holds it for the debounce window.
func (h *handler) send(c controller.Change) {
	h.mu.Lock()
	if !h.holding || (h.timer == nil && time.Since(h.lastSent) >= h.hold) {
		h.lastSent = time.Now()
		h.mu.Unlock()
		h.deliver([]controller.Change{c})
		return
	}
	if h.pending == nil {
		h.pending = map[string]controller.Change{}
	}
	h.pending[c.Namespace+"/"+c.Name] = c
	if h.timer == nil {
		h.timer = time.AfterFunc(h.hold-time.Since(h.lastSent), h.flush)
	}
	h.mu.Unlock()
}

// flush delivers the held changes, in namespace/name order.
func (h *handler) flush() {
	h.mu.Lock()
	held := h.pending
	h.pending, h.timer, h.lastSent = nil, nil, time.Now()
	h.mu.Unlock()
	if len(held) == 0 {
		return
	}
	changes := make([]controller.Change, 0, len(held))
	for _, k := range slices.Sorted(maps.Keys(held)) {
		changes = append(changes, held[k])
	}
	h.deliver(changes)
}

func (h *handler) deliver(changes []controller.Change) {
	select {
	case h.events <- controller.Event{Changes: changes, Origin: "watch " + h.alias}:
	case <-h.ctx.Done():
	}
}
