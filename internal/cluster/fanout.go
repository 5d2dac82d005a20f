package cluster

import (
	"context"
	"errors"
	"maps"
	"slices"
	"sync"

	"github.com/haptic-io/haptic/internal/controller"
)

// fanout runs one [controller.Source] and hands its events to any number
// of subscribers, each a controller.Source of its own: one set of
// informers feeds the loops of every Gateway. A subscriber that joins
// late first gets the objects as they are then (and Initialized, once the
// source sent it), then every later event. Each subscriber has its own
// unbounded queue, so a slow loop holds no other back, and the events
// waiting in it are handed over as one.
type fanout struct {
	src controller.Source

	mu          sync.Mutex
	objects     map[string]map[objectKey]map[string]any // guarded by mu; by alias, the objects as last delivered
	initialized bool                                    // guarded by mu
	subs        map[*subscriber]struct{}                // guarded by mu
	changed     func()                                  // called after each event is queued, outside mu
}

type objectKey struct{ namespace, name string }

func newFanout(src controller.Source, changed func()) *fanout {
	if changed == nil {
		changed = func() {}
	}
	return &fanout{src: src, objects: map[string]map[objectKey]map[string]any{}, subs: map[*subscriber]struct{}{}, changed: changed}
}

// Run runs the source and fans its events out until ctx ends or the
// source fails.
func (f *fanout) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	events := make(chan controller.Event, 64)
	done := make(chan error, 1)
	go func() { done <- f.src.Run(ctx, events) }()
	for {
		select {
		case <-ctx.Done():
			if err := <-done; err != nil && !errors.Is(err, ctx.Err()) {
				return err
			}
			return ctx.Err()
		case err := <-done:
			if err == nil {
				err = errors.New("source stopped")
			}
			return err
		case ev := <-events:
			f.deliver(ev)
			f.changed()
		}
	}
}

func (f *fanout) deliver(ev controller.Event) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range ev.Changes {
		byKey := f.objects[c.Alias]
		if byKey == nil {
			byKey = map[objectKey]map[string]any{}
			f.objects[c.Alias] = byKey
		}
		k := objectKey{c.Namespace, c.Name}
		if c.Object == nil {
			delete(byKey, k)
		} else {
			byKey[k] = c.Object
		}
	}
	if ev.Initialized {
		f.initialized = true
	}
	for s := range f.subs {
		s.push(ev)
	}
}

// Initialized reports whether the source's initial listing is complete.
func (f *fanout) Initialized() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.initialized
}

// Object returns the object of alias namespace/name as last delivered
// (read-only), or nil.
func (f *fanout) Object(alias, namespace, name string) map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.objects[alias][objectKey{namespace, name}]
}

// Subscribe returns a source that, while it runs, receives the objects
// as they are and then every event.
func (f *fanout) Subscribe() controller.Source {
	return controller.SourceFunc(func(ctx context.Context, events chan<- controller.Event) error {
		s := &subscriber{wake: make(chan struct{}, 1)}
		f.mu.Lock()
		s.push(f.replayLocked())
		f.subs[s] = struct{}{}
		f.mu.Unlock()
		defer func() {
			f.mu.Lock()
			delete(f.subs, s)
			f.mu.Unlock()
		}()
		return s.run(ctx, events)
	})
}

// replayLocked is one event holding every object, in alias, namespace
// and name order, with Initialized when the source sent it.
func (f *fanout) replayLocked() controller.Event {
	ev := controller.Event{Initialized: f.initialized, Origin: "informers (replay)"}
	for _, alias := range slices.Sorted(maps.Keys(f.objects)) {
		byKey := f.objects[alias]
		keys := slices.SortedFunc(maps.Keys(byKey), func(a, b objectKey) int {
			if a.namespace != b.namespace {
				return cmpString(a.namespace, b.namespace)
			}
			return cmpString(a.name, b.name)
		})
		for _, k := range keys {
			ev.Changes = append(ev.Changes, controller.Change{Alias: alias, Namespace: k.namespace, Name: k.name, Object: byKey[k]})
		}
	}
	return ev
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// subscriber is one subscription's queue.
type subscriber struct {
	mu    sync.Mutex
	queue []controller.Event // guarded by mu
	wake  chan struct{}      // capacity 1
}

func (s *subscriber) push(ev controller.Event) {
	s.mu.Lock()
	s.queue = append(s.queue, ev)
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// take empties the queue into one event: the changes in order, Initialized
// if any event had it. Events with an error are kept apart (first), so
// that their origin is logged with them.
func (s *subscriber) take() []controller.Event {
	s.mu.Lock()
	q := s.queue
	s.queue = nil
	s.mu.Unlock()
	if len(q) <= 1 {
		return q
	}
	var out []controller.Event
	merged := controller.Event{Origin: "informers"}
	for _, ev := range q {
		if ev.Err != nil {
			out = append(out, controller.Event{Err: ev.Err, Origin: ev.Origin})
		}
		merged.Changes = append(merged.Changes, ev.Changes...)
		merged.Initialized = merged.Initialized || ev.Initialized
	}
	return append(out, merged)
}

func (s *subscriber) run(ctx context.Context, events chan<- controller.Event) error {
	for {
		for _, ev := range s.take() {
			if len(ev.Changes) == 0 && !ev.Initialized && ev.Err == nil {
				continue
			}
			select {
			case events <- ev:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-s.wake:
		}
	}
}

// List returns the objects of alias as last delivered (read-only), in no
// particular order.
func (f *fanout) List(alias string) []map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]map[string]any, 0, len(f.objects[alias]))
	for _, o := range f.objects[alias] {
		out = append(out, o)
	}
	return out
}

var _ objects = (*fanout)(nil)
