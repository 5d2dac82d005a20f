package propagation

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"
)

// poller polls one host at a time for the probe: start, then wait.
type poller interface {
	// start begins polling host and returns once its first answer came
	// back.
	start(ctx context.Context, host string) error
	// wait returns how polling the host ended.
	wait(ctx context.Context) (pollOutcome, error)
	// close stops the poller.
	close() error
}

var (
	_ poller = (*goroutinePoller)(nil)
	_ poller = (*processPoller)(nil)
)

// The probe's limit per host.
const (
	pollInterval = time.Millisecond
	pollLimit    = 30 * time.Second
)

// goroutinePoller polls from a goroutine of this process. Its timers fire
// late while local mode keeps every P busy.
type goroutinePoller struct {
	client *http.Client
	url    string
	done   chan pollResult
}

type pollResult struct {
	o   pollOutcome
	err error
}

func newGoroutinePoller(url string) *goroutinePoller {
	return &goroutinePoller{client: benchClient(), url: url}
}

func (p *goroutinePoller) start(ctx context.Context, host string) error {
	polling := make(chan struct{})
	done := make(chan pollResult, 1)
	p.done = done
	go func() {
		o, err := pollHost(ctx, p.client, p.url, host, pollInterval, pollLimit, func() { close(polling) })
		done <- pollResult{o, err}
	}()
	select {
	case <-polling:
	case r := <-done: // ctx ended before the first answer
		done <- r
	}
	return nil
}

func (p *goroutinePoller) wait(context.Context) (pollOutcome, error) {
	if p.done == nil {
		return pollOutcome{}, errors.New("poller: wait without start")
	}
	r := <-p.done
	p.done = nil
	return r.o, r.err
}

func (p *goroutinePoller) close() error {
	p.client.CloseIdleConnections()
	return nil
}

// processPoller drives a probe client ([RunProbeClient]) in a child
// process: one host per line on its stdin, its JSON lines on its stdout.
type processPoller struct {
	*child
	host string
}

// startProcessPoller starts argv; ctx's end kills it.
func startProcessPoller(ctx context.Context, argv []string) (*processPoller, error) {
	c, err := startChild(ctx, "probe client", argv)
	if err != nil {
		return nil, err
	}
	return &processPoller{child: c}, nil
}

// next returns the child's next event about p.host.
func (p *processPoller) next(ctx context.Context) (probeEvent, error) {
	line, err := p.child.next(ctx)
	if err != nil {
		return probeEvent{}, fmt.Errorf("host %s: %w", p.host, err)
	}
	return decodeProbeEvent(line, p.host)
}

func (p *processPoller) start(ctx context.Context, host string) error {
	p.host = host
	if err := p.send(host); err != nil {
		return err
	}
	ev, err := p.next(ctx)
	if err != nil {
		return err
	}
	if ev.Event != eventPolling {
		return fmt.Errorf("probe client: host %s: %q before %q", host, ev.Event, eventPolling)
	}
	return nil
}

func (p *processPoller) wait(ctx context.Context) (pollOutcome, error) {
	ev, err := p.next(ctx)
	if err != nil {
		return pollOutcome{}, err
	}
	if ev.Event == eventPolling {
		return pollOutcome{}, fmt.Errorf("probe client: host %s: a second %q", p.host, eventPolling)
	}
	return ev.outcome(), nil
}
