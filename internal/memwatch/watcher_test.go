package memwatch_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"runtime"
	"testing"
	"time"

	"github.com/haptic-io/haptic/internal/memwatch"
)

// ballast is kept live by the test so that the collector counts it.
var ballast []byte

func TestWatcherSeesALiveHeapPeakAndProfilesIt(t *testing.T) {
	var prof bytes.Buffer
	w := memwatch.Start(memwatch.Config{Interval: time.Millisecond, PeakProfile: &prof})
	const size = 64 << 20
	ballast = make([]byte, size)
	for i := range ballast {
		ballast[i] = byte(i) // resident, not only reserved
	}
	runtime.GC() // the live heap is what a collection measures
	time.Sleep(20 * time.Millisecond)
	mid, err := w.Now()
	if err != nil {
		t.Fatal(err)
	}
	ballast = nil
	runtime.GC()
	rep, err := w.Stop()
	if err != nil {
		t.Fatal(err)
	}
	if rep.HeapLive < size || rep.HeapObjects < size || rep.Mapped < size {
		t.Errorf("report %+v: want the live heap, objects and mapped memory at least the %d bytes held", rep, size)
	}
	if mid.SampledRSS < size || rep.Peak < size {
		t.Errorf("resident set while held %d, peak %d: want at least %d", mid.SampledRSS, rep.Peak, size)
	}
	if got := w.ProfiledAt(); got < size {
		t.Errorf("peak profile written at a live heap of %d bytes: want it taken while the %d were live", got, size)
	}
	zr, err := gzip.NewReader(&prof)
	if err != nil {
		t.Fatalf("peak profile is not a pprof file (gzip): %v", err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("peak profile: %v", err)
	}
	if !bytes.Contains(raw, []byte("inuse_space")) {
		t.Errorf("peak profile has no inuse_space sample type: not a heap profile")
	}
}

func TestWatcherStopTwiceWritesTheProfileOnce(t *testing.T) {
	var prof bytes.Buffer
	w := memwatch.Start(memwatch.Config{PeakProfile: &prof})
	runtime.GC()
	time.Sleep(30 * time.Millisecond)
	if _, err := w.Stop(); err != nil {
		t.Fatal(err)
	}
	n := prof.Len()
	if n == 0 {
		t.Fatal("no profile written")
	}
	if _, err := w.Stop(); err != nil {
		t.Fatal(err)
	}
	if prof.Len() != n {
		t.Errorf("second Stop wrote %d more bytes", prof.Len()-n)
	}
}
