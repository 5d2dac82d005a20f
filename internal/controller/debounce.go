package controller

import (
	"fmt"
	"time"
)

// Debounce defaults.
const (
	// DefaultDebounceInterval is the holdoff after a change that follows a
	// recent reconciliation (the reference's debounceInterval default).
	DefaultDebounceInterval = 100 * time.Millisecond
	// DefaultMaxDelayFactor gives the default maximum delay: this many
	// intervals.
	DefaultMaxDelayFactor = 5
)

// DebounceConfig sets how changes are coalesced into reconciliations.
type DebounceConfig struct {
	// Interval is the holdoff: a change that comes at least Interval after
	// the last reconciliation, with nothing pending, reconciles at once
	// (leading edge); any other change waits until no change came for
	// Interval. Zero disables debouncing: every change reconciles at once.
	// Negative is an error.
	Interval time.Duration
	// MaxDelay bounds how long a pending change waits under a steady
	// stream of changes. Zero means DefaultMaxDelayFactor × Interval; it
	// is raised to Interval if lower.
	MaxDelay time.Duration
}

// withDefaults applies the defaults and checks the fields.
func (c DebounceConfig) withDefaults() (DebounceConfig, error) {
	if c.Interval < 0 {
		return c, fmt.Errorf("debounce: Interval %v is negative", c.Interval)
	}
	if c.MaxDelay < 0 {
		return c, fmt.Errorf("debounce: MaxDelay %v is negative", c.MaxDelay)
	}
	if c.MaxDelay == 0 {
		c.MaxDelay = DefaultMaxDelayFactor * c.Interval
	}
	if c.MaxDelay < c.Interval {
		c.MaxDelay = c.Interval
	}
	return c, nil
}

// debouncer is the timing state of the loop's debounce: a leading-edge
// holdoff with a maximum delay (Contour's handler.go, with the leading
// edge measured from the last reconciliation). It reads no clock: every
// method takes now, so tests drive it with plain times. It belongs to the
// loop goroutine.
type debouncer struct {
	cfg DebounceConfig

	last    time.Time // start of the last reconciliation; zero: none yet
	first   time.Time // first pending change; zero: nothing pending
	latest  time.Time // latest pending change
	pending bool
}

func newDebouncer(cfg DebounceConfig) (*debouncer, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	return &debouncer{cfg: cfg}, nil
}

// change records a change at now and returns how long to wait before
// reconciling: zero means reconcile now.
func (d *debouncer) change(now time.Time) time.Duration {
	if d.cfg.Interval == 0 {
		d.pending = true
		d.first, d.latest = now, now
		return 0
	}
	if !d.pending && (d.last.IsZero() || now.Sub(d.last) >= d.cfg.Interval) {
		d.pending = true
		d.first, d.latest = now, now
		return 0 // leading edge
	}
	if !d.pending {
		d.pending = true
		d.first = now
	}
	d.latest = now
	return d.wait(now)
}

// wait returns how long after now the pending changes are due; zero when
// they are due, or when nothing is pending.
func (d *debouncer) wait(now time.Time) time.Duration {
	if !d.pending {
		return 0
	}
	due := d.latest.Add(d.cfg.Interval)
	if limit := d.first.Add(d.cfg.MaxDelay); limit.Before(due) {
		due = limit
	}
	if w := due.Sub(now); w > 0 {
		return w
	}
	return 0
}

// hasPending reports whether changes wait for a reconciliation.
func (d *debouncer) hasPending() bool { return d.pending }

// reconciled records that a reconciliation started at now, covering every
// change recorded so far.
func (d *debouncer) reconciled(now time.Time) {
	d.last = now
	d.pending = false
	d.first, d.latest = time.Time{}, time.Time{}
}
