package controller

import (
	"fmt"
	"time"
)

// Debounce defaults.
const (
	// DefaultStormSpacing is the default of [DebounceConfig].StormSpacing:
	// under a storm, at most 50 reconciliations a second.
	DefaultStormSpacing = 20 * time.Millisecond
	// DefaultMaxDelayFactor gives the default maximum delay of the
	// holdoff: this many intervals.
	DefaultMaxDelayFactor = 5
)

// DebounceConfig sets how changes are coalesced into reconciliations.
//
// The zero value holds no isolated change. A change that finds the loop
// idle, with nothing pending, is reconciled at once. Changes that arrive
// while a reconciliation runs are reconciled together by one follow-up,
// which starts as soon as that reconciliation ends. When changes come
// faster than reconciliations complete (more than one arrived while the
// last one ran), reconciliations start at least StormSpacing apart, so
// that a storm of changes makes a few large reconciliations rather than
// one per change, and a steady stream still reconciles once per spacing.
//
// Interval adds a holdoff for operators who want harder batching.
type DebounceConfig struct {
	// Interval is an opt-in holdoff. A change that comes within Interval
	// of the start of the last reconciliation waits until no change came
	// for Interval, at most MaxDelay; a change that comes later, with
	// nothing pending, is reconciled at once (leading edge). Zero, the
	// default, holds nothing. Negative is an error.
	Interval time.Duration
	// MaxDelay bounds the holdoff under a steady stream of changes: the
	// changes pending are reconciled at most MaxDelay after the first of
	// them was seen. Zero means DefaultMaxDelayFactor × Interval; it is
	// raised to Interval if lower. Without an Interval it has no effect.
	// Negative is an error.
	MaxDelay time.Duration
	// StormSpacing is the least time from the start of one reconciliation
	// to the start of the next while changes come faster than
	// reconciliations complete; it bounds the reconciliation rate under a
	// storm. It never delays a change that finds the loop idle. Zero
	// means DefaultStormSpacing; negative means no bound (each
	// follow-up starts as soon as the reconciliation before it ends).
	StormSpacing time.Duration
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
	switch {
	case c.StormSpacing == 0:
		c.StormSpacing = DefaultStormSpacing
	case c.StormSpacing < 0:
		c.StormSpacing = 0
	}
	return c, nil
}

// debouncer is the timing state of the loop's debounce. The loop tells it
// about every change ([debouncer.change]) and brackets every
// reconciliation with [debouncer.begin] and [debouncer.end], recording
// the changes that arrived while the reconciliation ran before it calls
// end; [debouncer.wait] says when the pending changes are due. It reads no
// clock: every method takes now, so tests drive it with plain times. It
// belongs to the loop goroutine.
type debouncer struct {
	cfg DebounceConfig

	busy    bool      // a reconciliation runs
	last    time.Time // start of the last reconciliation; zero: none yet
	pending int       // changes seen since the last reconciliation started
	first   time.Time // when the first pending change was seen
	latest  time.Time // when the latest pending change was seen
	held    bool      // the first pending change came within Interval of last: holdoff
	spaced  bool      // the last reconciliation ended with more than one change pending: storm spacing
}

func newDebouncer(cfg DebounceConfig) (*debouncer, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	return &debouncer{cfg: cfg}, nil
}

// change records a change seen at now.
func (d *debouncer) change(now time.Time) {
	if d.pending == 0 {
		d.first = now
		d.held = d.cfg.Interval > 0 && !d.last.IsZero() && now.Sub(d.last) < d.cfg.Interval
	}
	d.pending++
	d.latest = now
}

// wait reports whether changes are pending for a reconciliation the loop
// may start, and how long after now it is due: zero means start it now.
// While a reconciliation runs nothing is due: its end decides.
func (d *debouncer) wait(now time.Time) (time.Duration, bool) {
	if d.pending == 0 || d.busy {
		return 0, false
	}
	due := d.first
	if d.held {
		due = d.latest.Add(d.cfg.Interval)
		if limit := d.first.Add(d.cfg.MaxDelay); limit.Before(due) {
			due = limit
		}
	}
	if d.spaced {
		if next := d.last.Add(d.cfg.StormSpacing); next.After(due) {
			due = next
		}
	}
	if w := due.Sub(now); w > 0 {
		return w, true
	}
	return 0, true
}

// begin records that a reconciliation started at now, covering every
// change recorded so far.
func (d *debouncer) begin(now time.Time) {
	d.busy = true
	d.last = now
	d.pending = 0
	d.first, d.latest = time.Time{}, time.Time{}
	d.held, d.spaced = false, false
}

// end records that the reconciliation begun last ended. The changes
// recorded since begin arrived while it ran: more than one of them means
// changes come faster than reconciliations complete, and the follow-up
// keeps the storm spacing.
func (d *debouncer) end() {
	d.busy = false
	d.spaced = d.pending > 1 && d.cfg.StormSpacing > 0
}
