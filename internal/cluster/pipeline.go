package cluster

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/haptic-io/haptic/agentapi"
	"github.com/haptic-io/haptic/internal/controller"
	"github.com/haptic-io/haptic/templating"
)

// pipeline is one running loop: the informers of one set of watches, the
// HAProxy pods of one selector and the controller loop between them. A
// config whose watches change starts a new pipeline (its store must be
// listed anew); a config with new templates only swaps the engine.
type pipeline struct {
	loop   *controller.Loop
	src    *Source
	pods   *Pods
	cancel context.CancelFunc
	done   chan struct{}

	mu       sync.Mutex
	settings *Settings // guarded by mu
}

func (c *ctrl) startPipeline(ctx context.Context, s *Settings, engine *templating.Engine) (*pipeline, error) {
	token, err := c.token(ctx, s)
	if err != nil {
		return nil, err
	}
	src, err := NewSource(SourceConfig{Client: c.dyn, Watches: s.Watches, Log: c.log, Events: c.watchEvents})
	if err != nil {
		return nil, err
	}
	p := &pipeline{settings: s, src: src, done: make(chan struct{})}
	pods, err := NewPods(PodsConfig{
		Client: c.kube, Namespace: s.PodNamespace, Selector: s.PodSelector, Port: s.AgentPort,
		Token:   func() agentapi.Token { return token },
		Changed: func() { p.trigger() },
	})
	if err != nil {
		return nil, err
	}
	p.pods = pods
	loop, err := controller.New(controller.Config{
		Source:      src,
		QuietStatus: quietStatus(s.Watches),
		Engine:      engine,
		Targets: func() []controller.Target {
			if !c.leading.Load() {
				return nil
			}
			return pods.Targets()
		},
		Active:       c.leading.Load,
		Fence:        c.term.Load(),
		Checker:      c.checker,
		CheckSpacing: c.cfg.CheckSpacing,
		Debounce:     c.cfg.Debounce,
		IdleGC:       true,
		Log:          c.log,
		Registerer:   c.reg,
	})
	if err != nil {
		return nil, err
	}
	p.loop = loop
	ctx, p.cancel = context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := pods.Run(ctx); err != nil && ctx.Err() == nil {
			c.log.Error("pod discovery stopped", "error", err)
		}
	})
	wg.Go(func() {
		if err := loop.Run(ctx); err != nil && ctx.Err() == nil {
			c.log.Error("controller loop stopped", "error", err)
		}
	})
	wg.Go(func() { p.drift(ctx) })
	wg.Go(func() { p.syncDeadline(ctx, c, s.SyncTimeout) })
	go func() {
		wg.Wait()
		close(p.done)
	}()
	return p, nil
}

// trigger asks the loop to reconcile (new pods); safe before the loop
// exists.
func (p *pipeline) trigger() {
	if p.loop != nil {
		p.loop.Trigger()
	}
}

func (p *pipeline) setSettings(s *Settings) {
	p.mu.Lock()
	p.settings = s
	p.mu.Unlock()
}

func (p *pipeline) current() *Settings {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.settings
}

func (p *pipeline) stop() {
	p.cancel()
	<-p.done
}

// drift re-dispatches every DriftPreventionInterval: the dispatcher reads
// each agent's state, and an agent whose tree drifted gets the full state.
func (p *pipeline) drift(ctx context.Context) {
	for {
		d := p.current().DriftPreventionInterval
		if d <= 0 {
			d = DefaultDriftPreventionInterval
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(d):
			p.loop.Trigger()
		}
	}
}

// syncDeadline reports informers that have not listed within timeout:
// the loop still waits for them (a half-listed world would delete
// routes), but the operator hears why nothing renders.
func (p *pipeline) syncDeadline(ctx context.Context, c *ctrl, timeout time.Duration) {
	t := time.NewTimer(timeout)
	defer t.Stop()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			if p.loop.Status().Initialized {
				return
			}
		case <-t.C:
			msg := fmt.Sprintf("informers not synced after %v: nothing rendered yet", timeout)
			c.log.Error(msg)
			c.status.setReady(p.current().Generation, false, "SyncTimeout", msg)
			return
		}
	}
}
