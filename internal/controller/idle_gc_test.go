package controller

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/haptic-io/haptic/agentapi"
)

const mib = 1 << 20

func TestCollectSoonWhenTheNextReconciliationReachesTheEarliestTrigger(t *testing.T) {
	// Live 64 MiB, goal 128 MiB: the runtime may start a collection from
	// 64 + 45/64 × 64 = 109 MiB on.
	at := func(objects, perReconcile uint64) bool {
		return collectSoon(heapStats{Objects: objects * mib, Live: 64 * mib, Goal: 128 * mib}, perReconcile*mib)
	}
	tests := []struct {
		name         string
		objects, per uint64
		want         bool
	}{
		{"just collected", 64, 4, false},
		{"two reconciliations short", 100, 4, false},
		{"the next reconciliation crosses", 106, 4, true},
		{"already past the trigger", 112, 4, true},
		{"a large reconciliation from far", 80, 30, true},
		{"nothing allocated per reconciliation", 120, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := at(tt.objects, tt.per); got != tt.want {
				t.Errorf("collectSoon(objects %d MiB, %d MiB per reconciliation) = %v, want %v", tt.objects, tt.per, got, tt.want)
			}
		})
	}
	// GOGC=off without a memory limit: the goal is out of reach.
	if collectSoon(heapStats{Objects: 500 * mib, Live: 64 * mib, Goal: ^uint64(0)}, 4*mib) {
		t.Error("collectSoon with an unreachable goal = true, want false")
	}
	if collectSoon(heapStats{Objects: 64 * mib, Live: 64 * mib, Goal: 64 * mib}, 4*mib) {
		t.Error("collectSoon with goal = live = true, want false (no runway to measure)")
	}
}

// scriptedHeap is a heap reading the test moves by hand.
type scriptedHeap struct{ h heapStats }

func (s *scriptedHeap) read() heapStats { return s.h }

// alloc moves the heap as a reconciliation allocating n bytes does.
func (s *scriptedHeap) alloc(n uint64) { s.h.Allocs += n; s.h.Objects += n }

func TestIdleCollectorCollectsBeforeTheReconciliationThatWouldTrigger(t *testing.T) {
	heap := &scriptedHeap{h: heapStats{Objects: 64 * mib, Live: 64 * mib, Goal: 128 * mib}}
	var collections atomic.Int32
	c := &idleCollector{collectAfter: true, read: heap.read, collect: func() {
		collections.Add(1)
		heap.h.Objects = heap.h.Live // what a collection leaves
	}}
	reconcile := func() {
		c.begin()
		heap.alloc(4 * mib)
		c.end()
		c.wait()
	}
	var at []int
	for i := range 30 {
		before := collections.Load()
		reconcile()
		if collections.Load() != before {
			at = append(at, i)
		}
	}
	// From 64 MiB at 4 MiB a reconciliation, the eleventh (index 10)
	// leaves 108 MiB, and the next would cross 109 MiB; the collection
	// takes the heap back to 64 MiB and the count starts again.
	if len(at) != 2 || at[0] != 10 || at[1] != 21 {
		t.Errorf("collections after reconciliations %v, want [10 21]", at)
	}
	if collectSoon(heap.h, 4*mib) {
		t.Errorf("heap %d MiB after the run: the next reconciliation would start a collection", heap.h.Objects/mib)
	}
}

func TestIdleCollectorRunsOneCollectionAtATime(t *testing.T) {
	heap := &scriptedHeap{h: heapStats{Objects: 120 * mib, Live: 64 * mib, Goal: 128 * mib}}
	release := make(chan struct{})
	var collections atomic.Int32
	c := &idleCollector{collectAfter: true, read: heap.read, collect: func() {
		collections.Add(1)
		<-release
	}}
	for range 3 {
		c.begin()
		heap.alloc(mib)
		c.end()
	}
	close(release)
	c.wait()
	if n := collections.Load(); n != 1 {
		t.Errorf("%d collections started while one ran, want 1", n)
	}
	c.begin()
	heap.alloc(mib)
	c.end()
	c.wait()
	if n := collections.Load(); n != 2 {
		t.Errorf("%d collections after the first ended, want 2", n)
	}
}

func TestIdleCollectorRemembersALargeReconciliation(t *testing.T) {
	heap := &scriptedHeap{h: heapStats{Objects: 64 * mib, Live: 64 * mib, Goal: 128 * mib}}
	c := &idleCollector{collectAfter: true, read: heap.read, collect: func() {}}
	c.begin()
	heap.alloc(32 * mib)
	c.end()
	c.begin()
	c.end() // allocated nothing
	if want := uint64(16 * mib); c.perReconcile != want {
		t.Errorf("per-reconciliation estimate %d MiB after 32 MiB then 0, want %d (half)", c.perReconcile/mib, want/mib)
	}
	c.begin()
	heap.alloc(20 * mib)
	c.end()
	if want := uint64(20 * mib); c.perReconcile != want {
		t.Errorf("per-reconciliation estimate %d MiB after 20 MiB, want %d (the larger of the new and the halved)", c.perReconcile/mib, want/mib)
	}
	c.wait()
}

func TestReadHeapStatsReadsTheRuntime(t *testing.T) {
	before := readHeapStats()
	sink := make([][]byte, 0, 64)
	for range 64 {
		sink = append(sink, make([]byte, 64<<10))
	}
	after := readHeapStats()
	if len(sink) != 64 || after.Allocs < before.Allocs+64*64<<10 {
		t.Errorf("allocs went %d → %d after allocating 4 MiB", before.Allocs, after.Allocs)
	}
	if after.Goal == 0 || after.Live == 0 || after.Objects == 0 {
		t.Errorf("heap stats %+v: a field the runtime always has is zero", after)
	}
}

func TestLoopWithIdleGCCollectsAfterAReconciliationAndWaitsForIt(t *testing.T) {
	src, agent := newChanSource(), newFakeAgent()
	l, err := New(Config{
		Source:  src,
		Engine:  testEngine(t),
		Targets: func() []Target { return []Target{{Name: "haproxy-0", Agent: agent}} },
		Log:     testLogger(t),
		IdleGC:  true,
	})
	if err != nil {
		t.Fatal(err)
	}
	// The heap sits right below the earliest trigger: every
	// reconciliation allocates enough to cross it.
	heap := &scriptedHeap{h: heapStats{Objects: 108 * mib, Live: 64 * mib, Goal: 128 * mib}}
	started, finished := make(chan struct{}, 8), make(chan struct{}, 8)
	l.idleGC.read = func() heapStats { heap.alloc(mib); return heap.read() }
	l.idleGC.collect = func() {
		started <- struct{}{}
		time.Sleep(50 * time.Millisecond) // Run must wait for this
		finished <- struct{}{}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- l.Run(ctx) }()
	src.send(t, Event{Changes: []Change{upsert(route("a", "a.example", "127.0.0.1", 9001))}, Initialized: true})
	if r := agent.next(t); r.Verdict != agentapi.VerdictReload {
		t.Fatalf("first apply: %s, want the full-state reload", describe(r))
	}
	select {
	case <-started:
	case <-time.After(waitTimeout):
		t.Fatal("no collection after a reconciliation that leaves the heap at the trigger")
	}
	cancel()
	select {
	case <-done:
	case <-time.After(waitTimeout):
		t.Fatal("Run did not return after cancel")
	}
	select {
	case <-finished:
	default:
		t.Error("Run returned while the collection it started still ran")
	}
}

func TestIdleCollectorReleasesOncePerQuietSpell(t *testing.T) {
	heap := &scriptedHeap{h: heapStats{Objects: 64 * mib, Live: 64 * mib, Goal: 128 * mib}}
	var releases atomic.Int32
	c := &idleCollector{collectAfter: true, read: heap.read, collect: func() {}, release: func() { releases.Add(1) }}
	c.idle()
	c.wait()
	if n := releases.Load(); n != 0 {
		t.Errorf("%d releases before any reconciliation, want 0", n)
	}
	c.begin()
	heap.alloc(mib)
	c.end()
	c.idle()
	c.idle() // still the same quiet spell
	c.wait()
	if n := releases.Load(); n != 1 {
		t.Errorf("%d releases after one reconciliation and two quiet timeouts, want 1", n)
	}
	c.begin()
	c.end()
	c.idle()
	c.wait()
	if n := releases.Load(); n != 2 {
		t.Errorf("%d releases after a second reconciliation, want 2", n)
	}
}

// TestIdleCollectorWithoutCollectAfterOnlyReleases: without IdleGC a
// reconciliation that would trigger a collection starts none, and the
// quiet spell after it still releases.
func TestIdleCollectorWithoutCollectAfterOnlyReleases(t *testing.T) {
	heap := &scriptedHeap{h: heapStats{Objects: 64 * mib, Live: 64 * mib, Goal: 128 * mib}}
	var collections, releases atomic.Int32
	c := &idleCollector{read: heap.read, collect: func() { collections.Add(1) }, release: func() { releases.Add(1) }}
	for range 3 {
		c.begin()
		heap.alloc(40 * mib) // far past the earliest trigger
		c.end()
	}
	c.idle()
	c.wait()
	if n := collections.Load(); n != 0 {
		t.Errorf("%d collections, want none", n)
	}
	if n := releases.Load(); n != 1 {
		t.Errorf("%d releases after the quiet spell, want 1", n)
	}
}

func TestLoopReleasesMemoryOnlyAfterItIdledForIdleRelease(t *testing.T) {
	src, agent := newChanSource(), newFakeAgent()
	l, err := New(Config{
		Source:      src,
		Engine:      testEngine(t),
		Targets:     func() []Target { return []Target{{Name: "haproxy-0", Agent: agent}} },
		Log:         testLogger(t),
		IdleGC:      true,
		IdleRelease: time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	released := make(chan time.Time, 8)
	l.idleGC.collect = func() {}
	l.idleGC.release = func() { released <- time.Now() }
	runLoop(t, l)
	src.send(t, Event{Changes: []Change{upsert(route("a", "a.example", "127.0.0.1", 9001))}, Initialized: true})
	agent.next(t)
	// Changes 100 ms apart keep the loop from idling for a second.
	var last time.Time
	for i := range 5 {
		time.Sleep(100 * time.Millisecond)
		src.send(t, Event{Changes: []Change{upsert(route(fmt.Sprintf("r%d", i), fmt.Sprintf("r%d.example", i), "127.0.0.1", 9001))}})
		agent.next(t)
		last = time.Now()
	}
	select {
	case at := <-released:
		if d := at.Sub(last); d < 900*time.Millisecond {
			t.Errorf("released %v after the last reconciliation, want no sooner than the 1 s quiet spell", d)
		}
	case <-time.After(waitTimeout):
		t.Fatal("no release after the loop went quiet")
	}
	select {
	case <-released:
		t.Error("a second release in the same quiet spell")
	case <-time.After(1500 * time.Millisecond):
	}
}

func TestLoopReDispatchOfTheSamePlanKeepsTheQuietSpell(t *testing.T) {
	src, agent := newChanSource(), newFakeAgent()
	l, err := New(Config{
		Source:      src,
		Engine:      testEngine(t),
		Targets:     func() []Target { return []Target{{Name: "haproxy-0", Agent: agent}} },
		Log:         testLogger(t),
		IdleGC:      true,
		IdleRelease: time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	released := make(chan time.Time, 8)
	l.idleGC.collect = func() {}
	l.idleGC.release = func() { released <- time.Now() }
	runLoop(t, l)
	src.send(t, Event{Changes: []Change{upsert(route("a", "a.example", "127.0.0.1", 9001))}, Initialized: true})
	agent.next(t)
	last := time.Now()
	// Triggers 200 ms apart (as drift prevention or new pods do) render
	// the same plan again: the spell that began with the last change
	// still ends a second after it.
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 20 { // 4 s, bounded
			select {
			case <-stop:
				return
			case <-time.After(200 * time.Millisecond):
			}
			l.Trigger()
		}
	}()
	defer func() { close(stop); <-done }()
	select {
	case at := <-released:
		if d := at.Sub(last); d < 900*time.Millisecond || d > 2500*time.Millisecond {
			t.Errorf("released %v after the last change, want about the 1 s quiet spell", d)
		}
	case <-time.After(3500 * time.Millisecond):
		t.Fatal("no release while the same plan was re-dispatched every 200 ms")
	}
}

func TestIdleCollectorCollectsOnlyAfterAQuiet(t *testing.T) {
	heap := &scriptedHeap{h: heapStats{Objects: 120 * mib, Live: 64 * mib, Goal: 128 * mib}}
	started := make(chan struct{}, 8)
	c := &idleCollector{collectAfter: true, read: heap.read, quiet: time.Millisecond, collect: func() { started <- struct{}{} }}
	// Back to back: the next reconciliation begins before the quiet is
	// over and cancels the collection the one before scheduled, however
	// long it then runs.
	c.begin()
	heap.alloc(mib)
	c.end()
	c.begin()
	time.Sleep(20 * time.Millisecond) // a reconciliation twenty quiets long
	heap.h.Objects = heap.h.Live      // far from the trigger: end schedules nothing
	c.end()
	c.wait()
	if n := len(started); n != 0 {
		t.Fatalf("%d collections while reconciliations came back to back, want 0", n)
	}
	// A reconciliation followed by a quiet: its collection runs.
	heap.h.Objects = 120 * mib
	c.begin()
	heap.alloc(mib)
	c.end()
	select {
	case <-started:
	case <-time.After(waitTimeout):
		t.Fatal("no collection after the loop stayed idle for the quiet")
	}
	c.wait()
}
