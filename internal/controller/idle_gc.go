package controller

import (
	"runtime"
	"runtime/debug"
	runtimemetrics "runtime/metrics"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultIdleRelease is [Config].IdleRelease's default: how long the loop
// idles after a reconciliation before it returns the heap's free memory
// to the system.
const DefaultIdleRelease = 10 * time.Second

// Names of the runtime metrics the idle collector reads.
const (
	metricHeapAllocs  = "/gc/heap/allocs:bytes"
	metricHeapObjects = "/memory/classes/heap/objects:bytes"
	metricHeapLive    = "/gc/heap/live:bytes"
	metricHeapGoal    = "/gc/heap/goal:bytes"
)

// collectQuiet is how long the loop must stay idle after a
// reconciliation before the idle collector starts the collection it
// decided on. Changes that come one right after another (a route added
// as soon as the previous one serves, a few milliseconds apart even
// through the apiserver) leave no quiet: a collection started at once
// would only overlap the next reconciliation, and starting collections
// early makes more of them. Those are left to the runtime.
const collectQuiet = 20 * time.Millisecond

// earliestTrigger is the fraction of the way from the live heap to the
// heap goal at which the Go runtime may start a collection on its own:
// its pacer never triggers below 45/64 of it (runtime/mgcpacer.go,
// minTriggerRatioNum / triggerRatioDen).
const earliestTrigger = 45.0 / 64

// heapStats is one reading of the heap, in bytes.
type heapStats struct {
	Allocs  uint64 // allocated since the process started
	Objects uint64 // occupied by objects, live or not yet swept
	Live    uint64 // marked live by the last collection
	Goal    uint64 // the heap size the current cycle aims at
}

// collectSoon reports whether the next reconciliation, allocating about
// perReconcile bytes, may push the heap past the point where the runtime
// starts a collection, so that its mark phase would run beside the
// render and the apply. A collection started now, right after a
// reconciliation, runs while nothing waits for the CPU when the next
// change is some time away.
func collectSoon(h heapStats, perReconcile uint64) bool {
	if perReconcile == 0 || h.Goal <= h.Live {
		return false
	}
	trigger := h.Live + uint64(earliestTrigger*float64(h.Goal-h.Live))
	return h.Objects+perReconcile >= trigger
}

// idleCollector moves the garbage collector's work out of
// reconciliations. The loop calls begin before a reconciliation and end
// after it; when the next one would likely start a collection (see
// collectSoon), end schedules one in the background, to run in the quiet
// before the next change: once the loop has stayed idle for quiet
// (collectQuiet in a Loop; 0 starts it at once). A reconciliation that
// begins sooner cancels it.
//
// begin, end and wait belong to the loop goroutine.
type idleCollector struct {
	read    func() heapStats // nil: the runtime's metrics
	collect func()           // nil: runtime.GC
	release func()           // nil: debug.FreeOSMemory

	// collectAfter: end may start a collection (Config.IdleGC); without
	// it the collector only releases memory after quiet spells.
	collectAfter bool
	// quiet is how long after end a collection it decided on starts.
	quiet time.Duration
	// pending is the collection end scheduled, until it starts or
	// begin cancels it.
	pending *time.Timer

	atStart      uint64 // Allocs at begin
	perReconcile uint64 // a halving peak of the bytes one reconciliation allocates
	// dirty: a reconciliation ended since the last release.
	dirty bool

	running atomic.Bool
	wg      sync.WaitGroup
}

func (c *idleCollector) stats() heapStats {
	if c.read != nil {
		return c.read()
	}
	return readHeapStats()
}

// begin marks the start of a reconciliation, which cancels a collection
// scheduled and not started yet.
func (c *idleCollector) begin() {
	c.cancelPending()
	if c.collectAfter {
		c.atStart = c.stats().Allocs
	}
}

// end marks the end of a reconciliation and starts a collection when the
// next reconciliation would likely start one.
func (c *idleCollector) end() {
	c.dirty = true
	if !c.collectAfter {
		return
	}
	h := c.stats()
	// A peak that halves per reconciliation: a large render (a Service
	// behind many routes) keeps the margin for a few more, and the first
	// render of everything stops counting after a dozen.
	c.perReconcile = max(h.Allocs-c.atStart, c.perReconcile/2)
	if !collectSoon(h, c.perReconcile) {
		return
	}
	if c.quiet <= 0 {
		if c.running.CompareAndSwap(false, true) {
			c.wg.Go(func() {
				defer c.running.Store(false)
				c.run()
			})
		}
		return
	}
	c.cancelPending()
	c.wg.Add(1)
	c.pending = time.AfterFunc(c.quiet, func() {
		defer c.wg.Done()
		c.collectNow()
	})
}

// collectNow runs a collection unless one runs already.
func (c *idleCollector) collectNow() {
	if !c.running.CompareAndSwap(false, true) {
		return
	}
	defer c.running.Store(false)
	c.run()
}

func (c *idleCollector) run() {
	if c.collect != nil {
		c.collect()
		return
	}
	runtime.GC()
}

// cancelPending cancels the scheduled collection, if it has not started.
func (c *idleCollector) cancelPending() {
	if c.pending == nil {
		return
	}
	if c.pending.Stop() {
		c.wg.Done()
	}
	c.pending = nil
}

// idle is called once the loop has idled for [Config].IdleRelease after a
// reconciliation. The heap then holds what the last reconciliations left
// (up to twice the live heap under the default GOGC), which the runtime
// keeps for the next ones; after a burst of changes that is memory the
// process may not need for a long time. idle collects and returns every
// free page to the system, once per quiet spell: the next reconciliation
// faults back in what it needs.
func (c *idleCollector) idle() {
	if !c.dirty {
		return
	}
	c.dirty = false
	c.wg.Go(func() {
		if c.release != nil {
			c.release()
			return
		}
		debug.FreeOSMemory()
	})
}

// wait waits for a collection end or idle started.
func (c *idleCollector) wait() {
	c.cancelPending()
	c.wg.Wait()
}

// readHeapStats reads the runtime's heap metrics.
func readHeapStats() heapStats {
	s := []runtimemetrics.Sample{{Name: metricHeapAllocs}, {Name: metricHeapObjects}, {Name: metricHeapLive}, {Name: metricHeapGoal}}
	runtimemetrics.Read(s)
	u := func(i int) uint64 {
		if s[i].Value.Kind() != runtimemetrics.KindUint64 {
			return 0
		}
		return s[i].Value.Uint64()
	}
	return heapStats{Allocs: u(0), Objects: u(1), Live: u(2), Goal: u(3)}
}
