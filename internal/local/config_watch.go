package local

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"

	"github.com/fsnotify/fsnotify"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/haptic-io/haptic/internal/controller"
	"github.com/haptic-io/haptic/store"
)

// configWatcher recompiles the template config when its file changes and
// hands the new engine to the loop. A config that does not load or
// compile, or that watches other resources, is reported and the last good
// one stays in use.
type configWatcher struct {
	cfg         Config
	statsSocket string
	loop        *controller.Loop
	resources   map[string]store.WatchedResource
	w           *fsnotify.Watcher
	path        string
	errors      prometheus.Counter
}

func newConfigWatcher(cfg Config, statsSocket string, loop *controller.Loop, resources map[string]store.WatchedResource) (*configWatcher, error) {
	path, err := filepath.Abs(cfg.ConfigPath)
	if err != nil {
		return nil, fmt.Errorf("local: config path: %w", err)
	}
	errs := prometheus.NewCounter(prometheus.CounterOpts{
		Name: "haptic_config_errors_total",
		Help: "Template config changes that did not load or compile; the last good config stays in use.",
	})
	if err := cfg.Registry.Register(errs); err != nil {
		return nil, fmt.Errorf("local: metrics: %w", err)
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("local: watch config: %w", err)
	}
	// Watch the directory: editors replace files by renaming.
	if err := w.Add(filepath.Dir(path)); err != nil {
		_ = w.Close()
		return nil, fmt.Errorf("local: watch config: %w", err)
	}
	return &configWatcher{cfg: cfg, statsSocket: statsSocket, loop: loop, resources: resources, w: w, path: path, errors: errs}, nil
}

func (c *configWatcher) run(ctx context.Context) {
	defer func() { _ = c.w.Close() }()
	log := c.cfg.Log
	for {
		select {
		case <-ctx.Done():
			return
		case err, ok := <-c.w.Errors:
			if !ok {
				return
			}
			log.Warn("watch config", "error", err)
		case ev, ok := <-c.w.Events:
			if !ok {
				return
			}
			if filepath.Clean(ev.Name) != c.path || (!ev.Has(fsnotify.Create) && !ev.Has(fsnotify.Write)) {
				continue
			}
			e, err := compile(c.cfg, c.statsSocket)
			switch {
			case err != nil:
				c.errors.Inc()
				log.Error("config change refused: the last good config stays in use", "path", c.path, "error", err)
			case !reflect.DeepEqual(e.Config().WatchedResources, c.resources):
				c.errors.Inc()
				log.Error("config change refused: watchedResources changed; restart haptic local to watch other resources", "path", c.path)
			default:
				log.Info("config changed: re-rendering", "path", c.path)
				c.loop.SetEngine(e)
			}
		}
	}
}
