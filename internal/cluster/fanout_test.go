package cluster

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/haptic-io/haptic/internal/controller"
)

func obj(ns, name string, v int) map[string]any {
	return map[string]any{"metadata": map[string]any{"namespace": ns, "name": name}, "v": int64(v)}
}

func change(alias, ns, name string, v int) controller.Change {
	c := controller.Change{Alias: alias, Namespace: ns, Name: name}
	if v > 0 {
		c.Object = obj(ns, name, v)
	}
	return c
}

// world applies events to a map the way the loop's store does.
type world map[string]int64

func (w world) apply(ev controller.Event) {
	for _, c := range ev.Changes {
		k := c.Alias + " " + c.Namespace + "/" + c.Name
		if c.Object == nil {
			delete(w, k)
		} else {
			w[k] = c.Object["v"].(int64)
		}
	}
}

// subscription runs src and collects what it delivers into a world, and
// whether Initialized came.
type subscription struct {
	mu          sync.Mutex
	w           world
	initialized bool
	events      int
}

func subscribe(ctx context.Context, t *testing.T, src controller.Source, wg *sync.WaitGroup) *subscription {
	t.Helper()
	s := &subscription{w: world{}}
	ch := make(chan controller.Event)
	wg.Go(func() { _ = src.Run(ctx, ch) })
	wg.Go(func() {
		for {
			select {
			case <-ctx.Done():
				return
			case ev := <-ch:
				s.mu.Lock()
				s.w.apply(ev)
				s.initialized = s.initialized || ev.Initialized
				s.events++
				s.mu.Unlock()
			}
		}
	})
	return s
}

func (s *subscription) snapshot() (world, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	w := world{}
	for k, v := range s.w {
		w[k] = v
	}
	return w, s.initialized
}

func waitWorld(t *testing.T, s *subscription, want world) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got, init := s.snapshot()
		if init && cmp.Equal(want, got) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("subscriber world (initialized %v) (-want +got):\n%s", init, cmp.Diff(want, got))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestFanoutGivesEverySubscriberTheSameWorldWhenEverItJoins: a
// subscriber that runs from the start and one that joins after the
// listing and some changes end with the same objects, both initialized;
// a subscriber nobody reads holds neither back.
func TestFanoutGivesEverySubscriberTheSameWorldWhenEverItJoins(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	in := make(chan controller.Event)
	src := controller.SourceFunc(func(ctx context.Context, events chan<- controller.Event) error {
		for {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case ev := <-in:
				events <- ev
			}
		}
	})
	var kicks sync.WaitGroup
	f := newFanout(src, func() { kicks.Done() })
	wg.Go(func() { _ = f.Run(ctx) })
	send := func(ev controller.Event) {
		kicks.Add(1)
		in <- ev
		kicks.Wait() // delivered to every queue
	}

	early := subscribe(ctx, t, f.Subscribe(), &wg)
	stuck := f.Subscribe() // runs, but nobody reads its events
	wg.Go(func() { _ = stuck.Run(ctx, make(chan controller.Event)) })
	send(controller.Event{Changes: []controller.Change{change("gateways", "a", "gw", 1), change("routes", "a", "r1", 1)}})
	send(controller.Event{Initialized: true})
	if f.Initialized() != true {
		t.Error("fanout not initialized after the source said so")
	}
	send(controller.Event{Changes: []controller.Change{change("routes", "a", "r2", 1), change("routes", "a", "r1", 2)}})
	want := world{"gateways a/gw": 1, "routes a/r1": 2, "routes a/r2": 1}
	waitWorld(t, early, want)

	late := subscribe(ctx, t, f.Subscribe(), &wg)
	waitWorld(t, late, want)
	send(controller.Event{Changes: []controller.Change{change("routes", "a", "r2", 0)}})
	delete(want, "routes a/r2")
	waitWorld(t, early, want)
	waitWorld(t, late, want)
	if got := f.Object("routes", "a", "r1"); got["v"] != int64(2) {
		t.Errorf("Object(routes a/r1) = %v, want v=2", got)
	}
	if got := f.Object("routes", "a", "r2"); got != nil {
		t.Errorf("Object of a deleted route = %v, want nil", got)
	}
}

// TestSubscriberHandsOverQueuedEventsAsOne: events that queued while the
// loop was busy come as one event with their changes in order.
func TestSubscriberHandsOverQueuedEventsAsOne(t *testing.T) {
	s := &subscriber{wake: make(chan struct{}, 1)}
	s.push(controller.Event{Changes: []controller.Change{change("r", "a", "x", 1)}})
	s.push(controller.Event{Initialized: true})
	s.push(controller.Event{Changes: []controller.Change{change("r", "a", "x", 0)}})
	got := s.take()
	if len(got) != 1 || !got[0].Initialized || len(got[0].Changes) != 2 || got[0].Changes[1].Object != nil {
		t.Fatalf("take = %+v; want one initialized event: upsert then delete of x", got)
	}
	if again := s.take(); len(again) != 0 {
		t.Errorf("second take = %v, want nothing", again)
	}
}
