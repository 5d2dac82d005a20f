package propagation

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"time"
)

// The storm writes its routes in stormBatches batches, stormWindow /
// stormBatches apart.
const (
	stormWindow  = 100 * time.Millisecond
	stormBatches = 10
)

// StormResult is the storm scenario: Routes new routes written within
// about 100 ms, each in a file of its own.
type StormResult struct {
	Routes int
	// Written is the time from the first write to the last.
	Written time.Duration
	// Settled is the time from the last write to the last route's first
	// 200; by then every route of the storm is rendered, since the
	// loop applies changes in order.
	Settled time.Duration
	// Reconciliations is how many reconciliations the loop ran from the
	// first write until the pod ran the last plan.
	Reconciliations int
	// Unserved counts the storm's routes that did not answer 200 once
	// the last one did. Must be 0.
	Unserved int
	// Unexpected are the answers to the last route that were neither 404
	// nor 200. Must be empty.
	Unexpected []Answer
	// Reloads during the storm; 0 on 3.4.
	Reloads int
}

// storm writes cfg.Storm new routes within about stormWindow, polls the
// last one from before the first write until its first 200, and counts
// the reconciliations the loop ran for them.
func (b *bench) storm(ctx context.Context) (res *StormResult, err error) {
	res = &StormResult{Routes: b.cfg.Storm}
	p, _, err := b.newPoller(ctx)
	if err != nil {
		return nil, err
	}
	defer func() {
		if cerr := p.close(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	host := func(i int) string { return fmt.Sprintf("s%d.bench.local", i) }
	file := func(i int) string { return filepath.Join(b.resources, fmt.Sprintf("storm-%05d.yaml", i)) }
	// The manifests are written beforehand as hidden files, which the
	// directory source ignores: the storm itself is renames only, quick
	// enough for the window.
	for i := range b.cfg.Storm {
		manifest := benchRoute(fmt.Sprintf("s%d", i), host(i), b.echoes[i%2])
		if err := os.WriteFile(hiddenTemp(file(i)), []byte(manifest), 0o644); err != nil {
			return res, err
		}
	}
	last := host(b.cfg.Storm - 1)
	if err := p.start(ctx, last); err != nil {
		return res, err
	}
	reloads, before := b.reloads(), b.info.Loop.Status().Reconciliations
	start := time.Now()
	var wrote time.Time
	for i := range b.cfg.Storm {
		batch := i * stormBatches / b.cfg.Storm
		if d := time.Until(start.Add(time.Duration(batch) * stormWindow / stormBatches)); d > 0 {
			time.Sleep(d)
		}
		if err := os.Rename(hiddenTemp(file(i)), file(i)); err != nil {
			return res, err
		}
		wrote = time.Now()
	}
	res.Written = wrote.Sub(start)
	o, err := p.wait(ctx)
	if err != nil {
		return res, err
	}
	res.Unexpected = o.Unexpected
	if o.TimedOut {
		res.Reconciliations = b.info.Loop.Status().Reconciliations - before
		return res, fmt.Errorf("storm route %s: no 200 within %v (%d reconciliations)", last, pollLimit, res.Reconciliations)
	}
	res.Settled = o.At.Sub(wrote)
	if err := b.waitApplied(ctx, time.Minute); err != nil {
		return res, err
	}
	res.Reconciliations = b.info.Loop.Status().Reconciliations - before
	res.Reloads = b.reloads() - reloads

	client := benchClient()
	defer client.CloseIdleConnections()
	for i := range b.cfg.Storm {
		if code, _, err := get(ctx, client, b.url, host(i)); err != nil || code != http.StatusOK {
			res.Unserved++
		}
	}
	return res, nil
}
