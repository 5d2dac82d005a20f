package controller

import (
	"sync"

	"github.com/haptic-io/haptic/templating"
)

// maxPlanTags bounds the plan tags a loop remembers. A pod runs one of
// the last few plans; a plan rendered again (same objects, same ID) gets
// its tag back.
const maxPlanTags = 64

// RenderInput is what [Config].RenderInput gives one render.
type RenderInput struct {
	// ExtraContext keys override the config's extraContext for this
	// render (see [templating.RenderOptions]).
	ExtraContext map[string]any
	// Tag is kept with the ID of the plan the render makes ([Loop.PlanTag]):
	// what the caller needs to know later about a plan a pod runs (in
	// Kubernetes, the Gateway generation it was rendered from). A plan ID
	// rendered again keeps the newest tag.
	Tag any
}

// planTags maps plan IDs to the tag of their newest render. It is safe for
// concurrent use.
type planTags struct {
	mu    sync.Mutex
	byID  map[string]any // guarded by mu
	order []string       // guarded by mu; oldest first
}

// set records tag for id, forgetting the oldest beyond maxPlanTags.
func (t *planTags) set(id string, tag any) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.byID == nil {
		t.byID = map[string]any{}
	}
	if _, ok := t.byID[id]; !ok {
		t.order = append(t.order, id)
	}
	t.byID[id] = tag
	for len(t.order) > maxPlanTags {
		delete(t.byID, t.order[0])
		t.order = t.order[1:]
	}
}

func (t *planTags) get(id string) (any, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	v, ok := t.byID[id]
	return v, ok
}

// renderInput returns the options and tag of one render of snap.
func (l *Loop) renderInput(snap templating.Store) (templating.RenderOptions, any) {
	if l.cfg.RenderInput == nil {
		return templating.RenderOptions{}, nil
	}
	in := l.cfg.RenderInput(snap)
	return templating.RenderOptions{ExtraContext: in.ExtraContext}, in.Tag
}

// PlanTag returns the [RenderInput].Tag of the newest render that made
// the plan id, if the loop still remembers it (the last 64 plans).
func (l *Loop) PlanTag(id string) (any, bool) { return l.tags.get(id) }
