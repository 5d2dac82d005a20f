package controller

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

const ms = time.Millisecond

// step is one thing that happens to a debouncer at a time offset: a
// change (the default), a reconciliation that begins or ends, or one that
// begins and ends at once. After a change or an end, want is the wait the
// debouncer reports; -1 means nothing is due.
type step struct {
	at   time.Duration
	op   string // "", "begin", "end", "reconcile"
	want time.Duration
}

func TestDebouncerWaits(t *testing.T) {
	tests := []struct {
		name  string
		cfg   DebounceConfig
		steps []step
	}{
		{
			name:  "the first change is due at once",
			steps: []step{{at: 0, want: 0}},
		},
		{
			name: "a change right after a reconciliation is due at once",
			steps: []step{
				{at: 0, want: 0}, {at: 0, op: "begin"}, {at: 5 * ms, op: "end", want: -1},
				{at: 6 * ms, want: 0},
			},
		},
		{
			name: "a change while a reconciliation runs is due at its end",
			steps: []step{
				{at: 0, want: 0}, {at: 0, op: "begin"},
				{at: 2 * ms, want: -1},
				{at: 5 * ms, op: "end", want: 0},
			},
		},
		{
			name: "two changes during one reconciliation space the follow-up from its start",
			steps: []step{
				{at: 0, want: 0}, {at: 0, op: "begin"},
				{at: 2 * ms, want: -1},
				{at: 3 * ms, want: -1},
				{at: 5 * ms, op: "end", want: 15 * ms}, // due 20 ms after the start
				{at: 8 * ms, want: 12 * ms},
			},
		},
		{
			name: "the storm spacing ends with the storm",
			steps: []step{
				{at: 0, want: 0}, {at: 0, op: "begin"},
				{at: 2 * ms, want: -1},
				{at: 3 * ms, want: -1},
				{at: 5 * ms, op: "end", want: 15 * ms},
				{at: 20 * ms, op: "begin"},
				{at: 25 * ms, op: "end", want: -1},
				{at: 26 * ms, want: 0}, // nothing came while the follow-up ran
			},
		},
		{
			name: "a reconciliation longer than the storm spacing is followed at once",
			steps: []step{
				{at: 0, want: 0}, {at: 0, op: "begin"},
				{at: 10 * ms, want: -1},
				{at: 20 * ms, want: -1},
				{at: 30 * ms, op: "end", want: 0},
			},
		},
		{
			name: "no storm spacing when it is disabled",
			cfg:  DebounceConfig{StormSpacing: -1},
			steps: []step{
				{at: 0, want: 0}, {at: 0, op: "begin"},
				{at: 1 * ms, want: -1},
				{at: 2 * ms, want: -1},
				{at: 5 * ms, op: "end", want: 0},
			},
		},
		{
			name: "with an interval a change soon after a reconciliation waits for the holdoff",
			cfg:  DebounceConfig{Interval: 100 * ms},
			steps: []step{
				{at: 0, want: 0}, {at: 0, op: "reconcile"},
				{at: 10 * ms, want: 100 * ms},
			},
		},
		{
			name: "with an interval a change during a reconciliation waits for the holdoff",
			cfg:  DebounceConfig{Interval: 100 * ms},
			steps: []step{
				{at: 0, want: 0}, {at: 0, op: "begin"},
				{at: 2 * ms, want: -1},
				{at: 5 * ms, op: "end", want: 97 * ms},
			},
		},
		{
			name: "with an interval each further change restarts the holdoff",
			cfg:  DebounceConfig{Interval: 100 * ms},
			steps: []step{
				{at: 0, want: 0}, {at: 0, op: "reconcile"},
				{at: 10 * ms, want: 100 * ms},
				{at: 60 * ms, want: 100 * ms},
				{at: 150 * ms, want: 100 * ms},
			},
		},
		{
			name: "with an interval a steady stream is bounded by the maximum delay",
			cfg:  DebounceConfig{Interval: 100 * ms, MaxDelay: 250 * ms},
			steps: []step{
				{at: 0, want: 0}, {at: 0, op: "reconcile"},
				{at: 10 * ms, want: 100 * ms},
				{at: 100 * ms, want: 100 * ms},
				{at: 190 * ms, want: 70 * ms}, // due at 10+250
				{at: 250 * ms, want: 10 * ms}, // still due at 260
				{at: 300 * ms, want: 0},       // overdue: reconcile now
			},
		},
		{
			name: "with an interval a change after a quiet interval is a leading edge again",
			cfg:  DebounceConfig{Interval: 100 * ms},
			steps: []step{
				{at: 0, want: 0}, {at: 0, op: "reconcile"},
				{at: 20 * ms, want: 100 * ms}, {at: 120 * ms, op: "reconcile"},
				{at: 220 * ms, want: 0},
			},
		},
		{
			name: "with an interval a change exactly one interval after the reconciliation is a leading edge",
			cfg:  DebounceConfig{Interval: 100 * ms},
			steps: []step{
				{at: 0, want: 0}, {at: 0, op: "reconcile"},
				{at: 100 * ms, want: 0},
			},
		},
		{
			name: "the default maximum delay is five intervals",
			cfg:  DebounceConfig{Interval: 10 * ms},
			steps: []step{
				{at: 0, want: 0}, {at: 0, op: "reconcile"},
				{at: 1 * ms, want: 10 * ms},
				{at: 9 * ms, want: 10 * ms},
				{at: 17 * ms, want: 10 * ms},
				{at: 25 * ms, want: 10 * ms},
				{at: 33 * ms, want: 10 * ms},
				{at: 41 * ms, want: 10 * ms},
				{at: 49 * ms, want: 2 * ms}, // due at 1+50
			},
		},
	}
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := newDebouncer(tt.cfg)
			if err != nil {
				t.Fatal(err)
			}
			var want, got []time.Duration
			for _, s := range tt.steps {
				now := base.Add(s.at)
				switch s.op {
				case "begin":
					d.begin(now)
					continue
				case "reconcile":
					d.begin(now)
					d.end()
					continue
				case "end":
					d.end()
				default:
					d.change(now)
				}
				w, ok := d.wait(now)
				if !ok {
					w = -1
				}
				want, got = append(want, s.want), append(got, w)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("waits (-want +got):\n%s", diff)
			}
		})
	}
}

// simulation is what [simulate] saw.
type simulation struct {
	// starts are the reconciliations' start times.
	starts []time.Duration
	// waits are, per change, the time from its arrival to the start of
	// the reconciliation that covered it.
	waits []time.Duration
}

// maxWait is the longest wait of a change.
func (s simulation) maxWait() time.Duration {
	var m time.Duration
	for _, w := range s.waits {
		m = max(m, w)
	}
	return m
}

// simulate drives a debouncer as [Loop.Run] does, on virtual time: the
// changes arrive at the given offsets and every reconciliation takes took.
// A change that arrives while a reconciliation runs is seen when it ends,
// as the loop takes the queued events then; a change seen when nothing
// runs and due at once starts a reconciliation at once.
func simulate(t *testing.T, cfg DebounceConfig, arrivals []time.Duration, took time.Duration) simulation {
	t.Helper()
	d, err := newDebouncer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(off time.Duration) time.Time { return base.Add(off) }
	var sim simulation
	var now time.Duration
	var pending []time.Duration // arrivals of the changes seen and not yet covered
	next := 0                   // the next arrival
	for range 4*len(arrivals) + 4 {
		w, due := d.wait(at(now))
		if !due && next == len(arrivals) {
			return sim
		}
		if !due || (next < len(arrivals) && arrivals[next] < now+w) {
			now = max(now, arrivals[next])
			d.change(at(now))
			pending = append(pending, arrivals[next])
			next++
			continue
		}
		now += w
		sim.starts = append(sim.starts, now)
		for _, a := range pending {
			sim.waits = append(sim.waits, now-a)
		}
		pending = pending[:0]
		d.begin(at(now))
		now += took
		for next < len(arrivals) && arrivals[next] < now {
			d.change(at(now))
			pending = append(pending, arrivals[next])
			next++
		}
		d.end()
	}
	t.Fatalf("simulation of %d changes did not settle", len(arrivals))
	return sim
}

// every returns n arrivals, gap apart from from.
func every(n int, from, gap time.Duration) []time.Duration {
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = from + time.Duration(i)*gap
	}
	return out
}

func TestDebounceReconcilesAnIdleChangeAtOnce(t *testing.T) {
	for _, cfg := range []DebounceConfig{{}, {StormSpacing: time.Second}} {
		sim := simulate(t, cfg, []time.Duration{0, 50 * ms, 51 * ms}, ms)
		if diff := cmp.Diff([]time.Duration{0, 50 * ms, 51 * ms}, sim.starts); diff != "" {
			t.Errorf("%+v: reconciliation starts (-want +got):\n%s", cfg, diff)
		}
		if w := sim.maxWait(); w != 0 {
			t.Errorf("%+v: a change waited %v, want none", cfg, w)
		}
	}
}

func TestDebounceFollowsAChangeDuringAReconciliationWithExactlyOneReconciliation(t *testing.T) {
	for _, during := range [][]time.Duration{{2 * ms}, {1 * ms, 2 * ms, 3 * ms, 4 * ms}} {
		// The first change starts a reconciliation of 5 ms; the others
		// arrive while it runs.
		sim := simulate(t, DebounceConfig{}, append([]time.Duration{0}, during...), 5*ms)
		if len(sim.starts) != 2 {
			t.Fatalf("%d changes during a reconciliation: reconciliations at %v, want exactly one follow-up", len(during), sim.starts)
		}
		// One change: followed up at once. More: the storm spacing, 20 ms
		// from the first start.
		want := 5 * ms
		if len(during) > 1 {
			want = DefaultStormSpacing
		}
		if sim.starts[1] != want {
			t.Errorf("%d changes during a reconciliation: follow-up at %v, want %v", len(during), sim.starts[1], want)
		}
	}
}

func TestDebounceNeverHoldsBackToBackChanges(t *testing.T) {
	// The gateway-api-bench probe: each change comes right after the
	// previous one was reconciled (its route's first 200), 1 ms after that
	// reconciliation ended, or while its tail still runs.
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(off time.Duration) time.Time { return base.Add(off) }
	for _, after := range []time.Duration{ms, -ms} {
		d, err := newDebouncer(DebounceConfig{})
		if err != nil {
			t.Fatal(err)
		}
		const took = 5 * ms
		var end time.Duration // of the running reconciliation
		running := false
		for i := range 1000 {
			arrival := end + after
			if i == 0 {
				arrival = 0
			}
			seen := arrival
			if running && arrival < end {
				seen = end // taken when the reconciliation ends
				d.change(at(seen))
				d.end()
			} else {
				if running {
					d.end()
				}
				d.change(at(seen))
			}
			if w, ok := d.wait(at(seen)); !ok || w != 0 {
				t.Fatalf("change %d, %v after the last end: wait %v (due %t), want at once", i, after, w, ok)
			}
			d.begin(at(seen))
			end, running = seen+took, true
		}
	}
}

func TestDebounceBoundsTheReconciliationsOfAStorm(t *testing.T) {
	// 1,000 changes in 100 ms.
	arrivals := every(1000, 0, 100*time.Microsecond)
	for _, took := range []time.Duration{300 * time.Microsecond, ms, 5 * ms, 20 * ms, 50 * ms} {
		sim := simulate(t, DebounceConfig{}, arrivals, took)
		t.Logf("reconciliations of %v: %d, the longest wait %v", took, len(sim.starts), sim.maxWait())
		// One for the first change, one per spacing (or per
		// reconciliation, when longer) while the storm lasts, and the
		// last follow-up.
		bound := 2 + int(100*ms/max(DefaultStormSpacing, took))
		if len(sim.starts) > bound {
			t.Errorf("reconciliations of %v: %d for the storm (%v), want at most %d", took, len(sim.starts), sim.starts, bound)
		}
		if len(sim.waits) != len(arrivals) {
			t.Errorf("reconciliations of %v: %d changes covered, want %d", took, len(sim.waits), len(arrivals))
		}
		if w, limit := sim.maxWait(), DefaultStormSpacing+2*took; w > limit {
			t.Errorf("reconciliations of %v: a change waited %v, want at most %v", took, w, limit)
		}
	}
}

func TestDebounceHonoursTheMaximumDelayUnderASteadyStream(t *testing.T) {
	// A change every 2 ms for 2 s, reconciliations of 5 ms.
	arrivals := every(1000, 0, 2*ms)
	const took = 5 * ms
	for _, tc := range []struct {
		name  string
		cfg   DebounceConfig
		limit time.Duration
	}{
		// At most a spacing after the start of the reconciliation it
		// arrived during.
		{"by default", DebounceConfig{}, DefaultStormSpacing},
		// The holdoff never ends (a change every 2 ms); the maximum delay
		// counts from when the change is seen, at most a reconciliation
		// after it arrived.
		{"with an interval", DebounceConfig{Interval: 100 * ms, MaxDelay: 250 * ms}, 250*ms + took},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sim := simulate(t, tc.cfg, arrivals, took)
			if w := sim.maxWait(); w > tc.limit {
				t.Errorf("a change waited %v, want at most %v", w, tc.limit)
			}
			if len(sim.starts) < 2*int(time.Second/tc.limit) {
				t.Errorf("%d reconciliations in 2 s, want the stream reconciled steadily", len(sim.starts))
			}
		})
	}
}

func TestDebounceConfigRejectsNegativeDurations(t *testing.T) {
	for _, cfg := range []DebounceConfig{{Interval: -1}, {MaxDelay: -1}} {
		if _, err := newDebouncer(cfg); err == nil {
			t.Errorf("newDebouncer(%+v) accepted a negative duration", cfg)
		}
	}
}
