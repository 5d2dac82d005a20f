package heapgoal

import (
	"runtime"
	"runtime/debug"
	runtimemetrics "runtime/metrics"
	"strings"
	"testing"
	"time"
)

func TestPercentPutsTheGoalAHeadroomOverTheLiveHeap(t *testing.T) {
	const mib = 1 << 20
	for _, tc := range []struct {
		name     string
		live     uint64
		headroom uint64
		want     int
	}{
		{"a small heap keeps the process's GOGC", 20 * mib, 64 * mib, 100},
		{"at the headroom the heap may double", 64 * mib, 64 * mib, 100},
		{"a larger heap grows by the headroom", 128 * mib, 64 * mib, 50},
		{"rounded up, never below the headroom", 192 * mib, 64 * mib, 34},
		{"a huge heap grows in proportion again", 1024 * mib, 64 * mib, 25},
		{"no live heap yet", 0, 64 * mib, 100},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := percentFor(tc.live, tc.headroom, 25, 100); got != tc.want {
				t.Errorf("percentFor(%d MiB, %d MiB) = %d, want %d", tc.live/mib, tc.headroom/mib, got, tc.want)
			}
		})
	}
}

func TestStartRefusesAnInvalidConfigNamingTheField(t *testing.T) {
	for cfg, want := range map[Config]string{
		{MinPercent: -1}:                 "MinPercent -1",
		{MinPercent: 50, MaxPercent: 40}: "MaxPercent 40",
	} {
		g, err := Start(cfg)
		if err == nil {
			g.Stop()
			t.Errorf("Start(%+v) = nil error, want one naming %q", cfg, want)
			continue
		}
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Start(%+v) = %v, want an error naming %q", cfg, err, want)
		}
	}
}

// live holds the heap the governor test keeps live.
var live [][]byte

func TestGovernorLowersGOGCAfterACollectionOfALargeHeapAndStopRestoresIt(t *testing.T) {
	before := gcPercent(t)
	live = make([][]byte, 64)
	for i := range live {
		live[i] = make([]byte, 1<<20) // 64 MiB live
	}
	t.Cleanup(func() { live = nil })

	g, err := Start(Config{Headroom: 16 << 20, MinPercent: 10, MaxPercent: 100})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Stop()
	// 16 MiB over a live heap of a little more than 64 MiB: 25 at most.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		runtime.GC()
		p := gcPercent(t)
		if g.Cycles() >= 2 && p >= 10 && p <= 25 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %d collections GOGC is %d, want 10 to 25", g.Cycles(), p)
		}
	}

	g.Stop()
	if got := gcPercent(t); got != before {
		t.Errorf("after Stop GOGC is %d, want the %d the process had", got, before)
	}
	runtime.GC()
	time.Sleep(50 * time.Millisecond) // the cleanup of the last sentinel runs
	if got := gcPercent(t); got != before {
		t.Errorf("a collection after Stop set GOGC to %d, want %d", got, before)
	}
}

func TestGovernorLeavesGOGCOffAlone(t *testing.T) {
	before := debug.SetGCPercent(-1)
	defer debug.SetGCPercent(before)
	g, err := Start(Config{Headroom: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Stop()
	runtime.GC()
	time.Sleep(50 * time.Millisecond)
	if got := gcPercent(t); got != -1 {
		t.Errorf("GOGC is %d, want off (-1)", got)
	}
	if n := g.Cycles(); n != 0 {
		t.Errorf("the governor saw %d collections, want none under GOGC=off", n)
	}
}

func gcPercent(t *testing.T) int {
	t.Helper()
	s := []runtimemetrics.Sample{{Name: "/gc/gogc:percent"}}
	runtimemetrics.Read(s)
	if s[0].Value.Kind() != runtimemetrics.KindUint64 {
		t.Fatalf("%s: kind %v", s[0].Name, s[0].Value.Kind())
	}
	v := s[0].Value.Uint64()
	if v > 1<<31 {
		return -1
	}
	return int(v)
}
