package rendergate

import (
	"context"
	"sync"
	"time"
)

// Pauser is implemented by a [renderplan.Checker] whose checks can be
// held while a caller's latency-critical work runs: the controller pauses
// the background check for the length of a reconciliation, so that a
// route add never waits for the CPU behind `haproxy -c` (on a 2-core
// machine the check, even at nice 19, made the next route add ~30 %
// slower).
// Pause and Resume nest: checks run again when every Pause has had its
// Resume.
type Pauser interface {
	Pause()
	Resume()
}

// pauser holds the checks of a HAProxyChecker: a check waits before each
// step while paused, and a running haproxy is stopped (SIGSTOP to its
// process group) and continued. Its timeout runs only while haproxy runs.
type pauser struct {
	mu      sync.Mutex
	depth   int
	resumed chan struct{}              // closed when depth drops to 0
	running map[*runningCheck]struct{} // started haproxy processes
}

// runningCheck is one started haproxy: its process group, and the rest
// of its time budget, which the timer spends only while it is not
// stopped.
type runningCheck struct {
	pgid    int
	timer   *time.Timer
	left    time.Duration
	since   time.Time // when the timer last started
	stopped bool
	expired bool // the timer fired: the check is being killed
}

// Pause stops the running checks and holds new ones until Resume.
func (p *pauser) Pause() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.depth++
	if p.depth > 1 {
		return
	}
	p.resumed = make(chan struct{})
	for rc := range p.running {
		rc.stop()
	}
}

// Resume undoes one Pause; the last one continues the stopped checks. A
// Resume without a Pause does nothing.
func (p *pauser) Resume() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.depth == 0 {
		return
	}
	p.depth--
	if p.depth > 0 {
		return
	}
	close(p.resumed)
	for rc := range p.running {
		rc.cont()
	}
}

// wait returns when no Pause is in force, or with ctx's error.
func (p *pauser) wait(ctx context.Context) error {
	p.mu.Lock()
	if p.depth == 0 {
		p.mu.Unlock()
		return nil
	}
	ch := p.resumed
	p.mu.Unlock()
	select {
	case <-ch:
		return p.wait(ctx)
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// track registers the started process group pgid with a budget of
// budget; expire runs once the budget is spent. A check started while
// paused is stopped at once. The caller must call untrack.
func (p *pauser) track(pgid int, budget time.Duration, expire func()) *runningCheck {
	rc := &runningCheck{pgid: pgid, left: budget, since: time.Now()}
	p.mu.Lock()
	defer p.mu.Unlock()
	rc.timer = time.AfterFunc(budget, expire)
	if p.running == nil {
		p.running = map[*runningCheck]struct{}{}
	}
	p.running[rc] = struct{}{}
	if p.depth > 0 {
		rc.stop()
	}
	return rc
}

// untrack forgets rc and stops its timer.
func (p *pauser) untrack(rc *runningCheck) {
	p.mu.Lock()
	defer p.mu.Unlock()
	rc.timer.Stop()
	delete(p.running, rc)
}

// stop and cont are called with the pauser's lock held. A signal that
// fails (the group has exited) changes nothing: Wait reports the exit.
func (rc *runningCheck) stop() {
	if rc.stopped {
		return
	}
	rc.stopped = true
	if rc.timer.Stop() {
		rc.left -= time.Since(rc.since)
	} else {
		rc.expired = true
	}
	_ = stopProcessGroup(rc.pgid)
}

func (rc *runningCheck) cont() {
	if !rc.stopped {
		return
	}
	rc.stopped = false
	_ = continueProcessGroup(rc.pgid)
	if !rc.expired {
		rc.since = time.Now()
		rc.timer.Reset(max(rc.left, 0))
	}
}
