package cluster

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/haptic-io/haptic/api/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
)

// FieldManager is the server-side apply field manager of everything the
// controller writes.
const FieldManager = "haptic-controller"

// statusRefresh is how often the leader compares the pods with the plan
// for the Ready condition.
const statusRefresh = time.Second

// statusWriter keeps the config's conditions and, while leading, writes
// them with server-side apply when they change.
type statusWriter struct {
	dyn             dynamic.Interface
	namespace, name string
	log             *slog.Logger

	mu      sync.Mutex
	conds   map[string]metav1.Condition // guarded by mu; by type
	gen     int64                       // guarded by mu; observedGeneration
	written []metav1.Condition          // guarded by mu; last written, sorted
	kick    chan struct{}
	once    sync.Once
}

func (w *statusWriter) kickChan() chan struct{} {
	w.once.Do(func() { w.kick = make(chan struct{}, 1) })
	return w.kick
}

func (w *statusWriter) trigger() {
	select {
	case w.kickChan() <- struct{}{}:
	default:
	}
}

func (w *statusWriter) set(gen int64, typ string, ok bool, reason, msg string) {
	st := metav1.ConditionFalse
	if ok {
		st = metav1.ConditionTrue
	}
	w.mu.Lock()
	if w.conds == nil {
		w.conds = map[string]metav1.Condition{}
	}
	old, had := w.conds[typ]
	c := metav1.Condition{Type: typ, Status: st, Reason: reason, Message: clipMessage(msg), ObservedGeneration: gen, LastTransitionTime: metav1.Now()}
	if had && old.Status == c.Status {
		c.LastTransitionTime = old.LastTransitionTime
	}
	w.conds[typ] = c
	w.gen = max(w.gen, gen)
	w.mu.Unlock()
	w.trigger()
}

func (w *statusWriter) setValidated(gen int64, ok bool, reason, msg string) {
	w.set(gen, v1alpha1.ConditionValidated, ok, reason, msg)
}

func (w *statusWriter) setReady(gen int64, ok bool, reason, msg string) {
	w.set(gen, v1alpha1.ConditionReady, ok, reason, msg)
}

// run refreshes Ready from the pipeline's loop, writes the status and
// has pub publish the rest while leading, until ctx ends.
func (w *statusWriter) run(ctx context.Context, pipe func() *pipeline, gw func() *gatewayPipeline, leading func() bool, pub *publisher) {
	t := time.NewTicker(statusRefresh)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-w.kickChan():
		}
		if !leading() {
			continue
		}
		p := pipe()
		if p != nil {
			w.refreshReady(p)
		}
		if g := gw(); g != nil {
			ok, reason, msg := g.readiness()
			w.setQuiet(g.current().Generation, ok, reason, msg)
		}
		w.write(ctx)
		if p != nil && pub != nil {
			pub.round(ctx, p)
		}
	}
}

func (w *statusWriter) refreshReady(p *pipeline) {
	gen := p.current().Generation
	st := p.loop.Status()
	switch {
	case !st.Initialized:
		w.setQuiet(gen, false, "Syncing", "waiting for the informers' first listing")
	case len(st.Pods) == 0:
		w.setQuiet(gen, false, v1alpha1.ReasonNoPods, "no HAProxy pod found")
	default:
		behind := 0
		for _, id := range st.Pods {
			if id != st.PlanID {
				behind++
			}
		}
		switch {
		case behind == 0:
			w.setQuiet(gen, true, v1alpha1.ReasonDeployed, "every HAProxy pod runs plan "+st.PlanID)
		case st.LastError != nil:
			w.setQuiet(gen, false, v1alpha1.ReasonDeployFailed, st.LastError.Error())
		default:
			w.setQuiet(gen, false, v1alpha1.ReasonDeploying, "pods not yet on plan "+st.PlanID)
		}
	}
}

// setQuiet sets Ready without waking the writer (run writes next).
func (w *statusWriter) setQuiet(gen int64, ok bool, reason, msg string) {
	w.set(gen, v1alpha1.ConditionReady, ok, reason, msg)
	select {
	case <-w.kickChan():
	default:
	}
}

func (w *statusWriter) write(ctx context.Context) {
	w.mu.Lock()
	conds := make([]metav1.Condition, 0, len(w.conds))
	for _, c := range w.conds {
		conds = append(conds, c)
	}
	gen := w.gen
	slices.SortFunc(conds, func(a, b metav1.Condition) int {
		if a.Type < b.Type {
			return -1
		}
		if a.Type > b.Type {
			return 1
		}
		return 0
	})
	same := slices.EqualFunc(conds, w.written, func(a, b metav1.Condition) bool {
		return a.Type == b.Type && a.Status == b.Status && a.Reason == b.Reason && a.Message == b.Message && a.ObservedGeneration == b.ObservedGeneration
	})
	w.mu.Unlock()
	if same || len(conds) == 0 {
		return
	}
	list := make([]any, len(conds))
	for i, c := range conds {
		list[i] = map[string]any{
			"type": c.Type, "status": string(c.Status), "reason": c.Reason, "message": c.Message,
			"observedGeneration": c.ObservedGeneration, "lastTransitionTime": c.LastTransitionTime.UTC().Format(time.RFC3339),
		}
	}
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": ConfigResource.GroupVersion().String(),
		"kind":       v1alpha1.KindHAProxyTemplateConfig,
		"metadata":   map[string]any{"name": w.name, "namespace": w.namespace},
		"status":     map[string]any{"observedGeneration": gen, "conditions": list},
	}}
	_, err := w.dyn.Resource(ConfigResource).Namespace(w.namespace).ApplyStatus(ctx, w.name, obj, metav1.ApplyOptions{FieldManager: FieldManager, Force: true})
	if err != nil {
		w.log.Warn("write config status", "error", err)
		return
	}
	w.mu.Lock()
	w.written = conds
	w.mu.Unlock()
}

// clipMessage bounds a condition message (the API allows 32 KiB).
func clipMessage(s string) string {
	const limit = 4096
	if len(s) > limit {
		return s[:limit] + "…"
	}
	return s
}
