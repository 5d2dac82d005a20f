package memwatch

import (
	"bytes"
	"fmt"
	"io"
	"runtime/metrics"
	"runtime/pprof"
	"sync"
	"time"
)

// Config configures a [Watcher].
type Config struct {
	// Interval is the time between two samples; zero means 10 ms.
	Interval time.Duration
	// PeakProfile, when set, receives at [Watcher.Stop] the heap profile
	// (pprof "heap") written when the live heap reached its highest: a
	// heap profile shows the objects live at the last completed
	// collection, so the one written right after the collection that
	// measured the highest live heap shows what held the memory at the
	// peak.
	PeakProfile io.Writer
	// PID is the process whose resident set is sampled; 0 means this
	// process. For another process the report has no Go heap figures
	// and PeakProfile is ignored.
	PID int
}

// Report is what a [Watcher] saw, in bytes.
type Report struct {
	// Resident is the process's resident set when the watcher stopped;
	// its Peak covers the whole life of the process: the higher of VmHWM
	// and every resident set sampled (see [Resident].Peak).
	Resident
	// SampledRSS is the highest resident set the samples saw.
	SampledRSS int64
	// HeapLive is the highest live heap a collection measured
	// (/gc/heap/live:bytes).
	HeapLive uint64
	// HeapObjects is the highest heap occupied by objects, live or not
	// yet collected (/memory/classes/heap/objects:bytes).
	HeapObjects uint64
	// Mapped is the highest memory the Go runtime held from the system
	// and had not returned (/memory/classes/total:bytes minus
	// /memory/classes/heap/released:bytes).
	Mapped uint64
}

// Watcher samples this process's memory until [Watcher.Stop].
type Watcher struct {
	cfg      Config
	read     func(pid int) (Resident, error) // Read; a test's stand-in
	stop     chan struct{}
	done     chan struct{}
	stopOnce sync.Once

	mu      sync.Mutex
	rep     Report       // guarded by mu
	profile bytes.Buffer // guarded by mu
	profAt  uint64       // guarded by mu; the live heap profile was written at
	err     error        // guarded by mu; the first sampling error
}

// Sampled runtime metrics, in the order of Watcher.samples.
var sampleNames = []string{
	"/gc/heap/live:bytes",
	"/memory/classes/heap/objects:bytes",
	"/memory/classes/total:bytes",
	"/memory/classes/heap/released:bytes",
}

// Start starts sampling this process, or the one of [Config].PID.
func Start(cfg Config) *Watcher {
	if cfg.Interval <= 0 {
		cfg.Interval = 10 * time.Millisecond
	}
	return start(cfg, Read)
}

func start(cfg Config, read func(int) (Resident, error)) *Watcher {
	w := &Watcher{cfg: cfg, read: read, stop: make(chan struct{}), done: make(chan struct{})}
	w.sample(make([]metrics.Sample, len(sampleNames)))
	go w.run()
	return w
}

func (w *Watcher) run() {
	defer close(w.done)
	s := make([]metrics.Sample, len(sampleNames))
	t := time.NewTicker(w.cfg.Interval)
	defer t.Stop()
	for {
		select {
		case <-w.stop:
			return
		case <-t.C:
			w.sample(s)
		}
	}
}

// profileStep is how much the live heap must grow past the last profile
// before the next one is written: writing one takes a few milliseconds
// at a few hundred MB.
const profileStep = 1.05

func (w *Watcher) sample(s []metrics.Sample) {
	res, err := w.read(w.cfg.PID)
	if w.cfg.PID != 0 {
		w.mu.Lock()
		defer w.mu.Unlock()
		if err != nil && w.err == nil {
			w.err = err
		}
		w.rep.SampledRSS = max(w.rep.SampledRSS, res.RSS)
		return
	}
	for i, n := range sampleNames {
		s[i].Name = n
	}
	metrics.Read(s)
	v := func(i int) uint64 {
		if s[i].Value.Kind() != metrics.KindUint64 {
			return 0
		}
		return s[i].Value.Uint64()
	}
	live, objects, total, released := v(0), v(1), v(2), v(3)
	w.mu.Lock()
	defer w.mu.Unlock()
	if err != nil && w.err == nil {
		w.err = err
	}
	w.rep.SampledRSS = max(w.rep.SampledRSS, res.RSS)
	w.rep.HeapLive = max(w.rep.HeapLive, live)
	w.rep.HeapObjects = max(w.rep.HeapObjects, objects)
	w.rep.Mapped = max(w.rep.Mapped, total-released)
	if w.cfg.PeakProfile != nil && live > 0 && float64(live) > profileStep*float64(w.profAt) {
		w.profile.Reset()
		if err := pprof.Lookup("heap").WriteTo(&w.profile, 0); err != nil && w.err == nil {
			w.err = fmt.Errorf("memwatch: heap profile: %w", err)
		}
		w.profAt = live
	}
}

// Now takes a sample and returns what the watcher saw so far, with the
// resident set read now.
func (w *Watcher) Now() (Report, error) {
	w.sample(make([]metrics.Sample, len(sampleNames)))
	res, err := w.read(w.cfg.PID)
	w.mu.Lock()
	defer w.mu.Unlock()
	r := w.rep
	r.Resident = res
	r.SampledRSS = max(r.SampledRSS, res.RSS)
	r.Peak = max(r.Peak, r.SampledRSS)
	if err == nil {
		err = w.err
	}
	return r, err
}

// ProfiledAt is the live heap, in bytes, when the peak profile kept for
// [Config.PeakProfile] was written; 0 before one was.
func (w *Watcher) ProfiledAt() uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.profAt
}

// Stop stops sampling, writes the peak profile (see
// [Config.PeakProfile]) and returns the report. Later calls return a
// new report and write nothing.
func (w *Watcher) Stop() (Report, error) {
	first := false
	w.stopOnce.Do(func() {
		close(w.stop)
		first = true
	})
	<-w.done
	r, err := w.Now()
	if first && w.cfg.PeakProfile != nil && w.cfg.PID == 0 {
		w.mu.Lock()
		_, werr := w.cfg.PeakProfile.Write(w.profile.Bytes())
		w.mu.Unlock()
		if err == nil && werr != nil {
			err = fmt.Errorf("memwatch: peak profile: %w", werr)
		}
	}
	return r, err
}
