package memwatch

import (
	"os"
	"sync"
	"testing"
	"time"
)

// scripted is a stand-in for Read that returns its readings in turn,
// then the last one again.
type scripted struct {
	mu   sync.Mutex
	pids []int
	res  []Resident
}

func (s *scripted) read(pid int) (Resident, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pids = append(s.pids, pid)
	r := s.res[0]
	if len(s.res) > 1 {
		s.res = s.res[1:]
	}
	return r, nil
}

func TestWatcherPeakIsNeverBelowAnRSSItRead(t *testing.T) {
	const mib = 1 << 20
	// The kernel's VmHWM lags: the process returned memory with madvise
	// and the high-water mark was never raised to the 300 MiB it held.
	s := &scripted{res: []Resident{
		{RSS: 100 * mib, Peak: 100 * mib},
		{RSS: 300 * mib, Peak: 300 * mib},
		{RSS: 120 * mib, Peak: 200 * mib},
	}}
	w := start(Config{Interval: time.Hour, PID: 42}, s.read)
	w.sample(nil) // 300 MiB
	rep, err := w.Stop()
	if err != nil {
		t.Fatal(err)
	}
	if rep.RSS != 120*mib || rep.SampledRSS != 300*mib || rep.Peak != 300*mib {
		t.Errorf("report RSS %d, sampled %d, peak %d MiB: want 120, 300, 300", rep.RSS/mib, rep.SampledRSS/mib, rep.Peak/mib)
	}
	for _, pid := range s.pids {
		if pid != 42 {
			t.Errorf("read process %d, want 42", pid)
		}
	}
}

func TestWatcherOfAnotherProcessReportsItsResidentSetOnly(t *testing.T) {
	w := Start(Config{Interval: time.Millisecond, PID: os.Getpid()})
	time.Sleep(10 * time.Millisecond)
	rep, err := w.Stop()
	if err != nil {
		t.Fatal(err)
	}
	if rep.RSS <= 0 || rep.SampledRSS < rep.RSS || rep.Peak < rep.SampledRSS {
		t.Errorf("report %+v: want 0 < RSS <= SampledRSS <= Peak", rep)
	}
	if rep.HeapLive != 0 || rep.HeapObjects != 0 || rep.Mapped != 0 {
		t.Errorf("report %+v: the Go heap figures of another process are unknown, want 0", rep)
	}
}
