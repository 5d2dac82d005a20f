package controller

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// step is one thing that happens to a debouncer at a time offset: a change
// (want: the wait it returns), or a reconciliation.
type step struct {
	at        time.Duration
	reconcile bool
	want      time.Duration
}

func TestDebouncerTiming(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		name  string
		cfg   DebounceConfig
		steps []step
	}{
		{
			name:  "the first change reconciles at once",
			cfg:   DebounceConfig{Interval: 100 * ms},
			steps: []step{{at: 0, want: 0}},
		},
		{
			name: "a change soon after a reconciliation waits for the holdoff",
			cfg:  DebounceConfig{Interval: 100 * ms},
			steps: []step{
				{at: 0, want: 0}, {at: 0, reconcile: true},
				{at: 10 * ms, want: 100 * ms},
			},
		},
		{
			name: "each further change restarts the holdoff",
			cfg:  DebounceConfig{Interval: 100 * ms},
			steps: []step{
				{at: 0, want: 0}, {at: 0, reconcile: true},
				{at: 10 * ms, want: 100 * ms},
				{at: 60 * ms, want: 100 * ms},
				{at: 150 * ms, want: 100 * ms},
			},
		},
		{
			name: "a steady stream is bounded by the maximum delay",
			cfg:  DebounceConfig{Interval: 100 * ms, MaxDelay: 250 * ms},
			steps: []step{
				{at: 0, want: 0}, {at: 0, reconcile: true},
				{at: 10 * ms, want: 100 * ms},
				{at: 100 * ms, want: 100 * ms},
				{at: 190 * ms, want: 70 * ms}, // due at 10+250
				{at: 250 * ms, want: 10 * ms}, // still due at 260
				{at: 300 * ms, want: 0},       // overdue: reconcile now
			},
		},
		{
			name: "a change after a quiet interval is a leading edge again",
			cfg:  DebounceConfig{Interval: 100 * ms},
			steps: []step{
				{at: 0, want: 0}, {at: 0, reconcile: true},
				{at: 20 * ms, want: 100 * ms}, {at: 120 * ms, reconcile: true},
				{at: 220 * ms, want: 0},
			},
		},
		{
			name: "a change exactly one interval after the reconciliation is a leading edge",
			cfg:  DebounceConfig{Interval: 100 * ms},
			steps: []step{
				{at: 0, want: 0}, {at: 0, reconcile: true},
				{at: 100 * ms, want: 0},
			},
		},
		{
			name: "zero interval disables debouncing",
			cfg:  DebounceConfig{},
			steps: []step{
				{at: 0, want: 0}, {at: 0, reconcile: true},
				{at: 1 * ms, want: 0},
				{at: 2 * ms, want: 0},
			},
		},
		{
			name: "the default maximum delay is five intervals",
			cfg:  DebounceConfig{Interval: 10 * ms},
			steps: []step{
				{at: 0, want: 0}, {at: 0, reconcile: true},
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
				if s.reconcile {
					d.reconciled(now)
					continue
				}
				want = append(want, s.want)
				got = append(got, d.change(now))
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("waits (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDebouncerWaitCountsDownToZero(t *testing.T) {
	d, err := newDebouncer(DebounceConfig{Interval: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if w := d.wait(base); w != 0 {
		t.Errorf("wait with nothing pending = %v, want 0", w)
	}
	d.change(base)
	d.reconciled(base)
	d.change(base.Add(30 * time.Millisecond))
	if !d.hasPending() {
		t.Fatal("a change inside the holdoff is not pending")
	}
	if w := d.wait(base.Add(100 * time.Millisecond)); w != 30*time.Millisecond {
		t.Errorf("wait 70 ms into the holdoff = %v, want 30ms", w)
	}
	if w := d.wait(base.Add(200 * time.Millisecond)); w != 0 {
		t.Errorf("wait after the holdoff = %v, want 0", w)
	}
	d.reconciled(base.Add(200 * time.Millisecond))
	if d.hasPending() {
		t.Error("changes still pending after a reconciliation")
	}
}

func TestDebounceConfigRejectsNegativeDurations(t *testing.T) {
	for _, cfg := range []DebounceConfig{{Interval: -1}, {MaxDelay: -1}} {
		if _, err := newDebouncer(cfg); err == nil {
			t.Errorf("newDebouncer(%+v) accepted a negative duration", cfg)
		}
	}
}
