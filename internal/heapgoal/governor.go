package heapgoal

import (
	"fmt"
	"math"
	"runtime"
	"runtime/debug"
	runtimemetrics "runtime/metrics"
	"sync"
)

// Defaults of [Config].
const (
	DefaultHeadroom   = 64 << 20
	DefaultMinPercent = 25
)

// Config configures a [Governor].
type Config struct {
	// Headroom is how many bytes the heap may grow past the live heap of
	// the last collection before the next one is due. Zero means
	// DefaultHeadroom (64 MiB).
	Headroom uint64
	// MinPercent is the lowest GOGC the Governor sets: past a live heap
	// of 100*Headroom/MinPercent bytes the heap grows in proportion
	// again, so that the collector's share of the CPU stays bounded.
	// Zero means DefaultMinPercent (25).
	MinPercent int
	// MaxPercent is the highest GOGC it sets; zero means the GOGC the
	// process had when [Start] ran (100 unless the GOGC environment
	// variable says otherwise).
	MaxPercent int
}

// Governor sets GOGC after every garbage collection from the live heap
// that collection found (see the package documentation).
type Governor struct {
	headroom uint64
	min, max int
	start    int // the GC percent before Start

	mu      sync.Mutex
	stopped bool // guarded by mu
	percent int  // guarded by mu; the GC percent last set
	cycles  uint64
}

// Start checks cfg and starts governing GOGC. It returns nil and an error
// naming the field when cfg is invalid, and a Governor that does nothing
// when the process runs with GOGC=off. Stop ends it.
func Start(cfg Config) (*Governor, error) {
	if cfg.Headroom == 0 {
		cfg.Headroom = DefaultHeadroom
	}
	if cfg.MinPercent == 0 {
		cfg.MinPercent = DefaultMinPercent
	}
	start := debug.SetGCPercent(-1)
	debug.SetGCPercent(start)
	if cfg.MaxPercent == 0 {
		cfg.MaxPercent = start
	}
	switch {
	case cfg.MinPercent < 1:
		return nil, fmt.Errorf("heapgoal: MinPercent %d: want at least 1", cfg.MinPercent)
	case cfg.MaxPercent >= 0 && cfg.MaxPercent < cfg.MinPercent:
		return nil, fmt.Errorf("heapgoal: MaxPercent %d: want at least MinPercent (%d)", cfg.MaxPercent, cfg.MinPercent)
	}
	g := &Governor{headroom: cfg.Headroom, min: cfg.MinPercent, max: cfg.MaxPercent, start: start, percent: start}
	if start < 0 || cfg.MaxPercent < 0 {
		g.stopped = true // GOGC=off: nothing to bound
		return g, nil
	}
	g.arm()
	return g, nil
}

// Percent returns the GOGC the Governor would set for a live heap of live
// bytes.
func (g *Governor) Percent(live uint64) int {
	return percentFor(live, g.headroom, g.min, g.max)
}

// percentFor is the GOGC that puts the next goal headroom bytes over a
// live heap of live bytes, within [lo, hi].
func percentFor(live, headroom uint64, lo, hi int) int {
	if live == 0 {
		return hi
	}
	p := math.Ceil(100 * float64(headroom) / float64(live))
	return int(max(float64(lo), min(float64(hi), p)))
}

// Stop stops governing and gives the process back the GOGC it had before
// Start.
func (g *Governor) Stop() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.stopped {
		return
	}
	g.stopped = true
	debug.SetGCPercent(g.start)
}

// Cycles returns how many collections the Governor has seen.
func (g *Governor) Cycles() uint64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.cycles
}

// sentinel is allocated anew after every collection: its cleanup runs once
// the next collection finds it unreachable. It is larger than the tiny
// allocator's 16 bytes, which would batch it with other objects and delay
// its cleanup.
type sentinel struct{ _ [32]byte }

func (g *Governor) arm() {
	s := new(sentinel)
	runtime.AddCleanup(s, (*Governor).collected, g)
}

// collected runs on the runtime's cleanup goroutine after a collection.
func (g *Governor) collected() {
	live := liveHeap()
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.stopped {
		return
	}
	g.cycles++
	if p := percentFor(live, g.headroom, g.min, g.max); p != g.percent {
		g.percent = p
		debug.SetGCPercent(p)
	}
	g.arm()
}

const metricHeapLive = "/gc/heap/live:bytes"

// liveHeap is the heap the last collection marked live.
func liveHeap() uint64 {
	s := []runtimemetrics.Sample{{Name: metricHeapLive}}
	runtimemetrics.Read(s)
	if s[0].Value.Kind() != runtimemetrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}
