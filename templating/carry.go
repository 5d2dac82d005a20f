package templating

import (
	"bytes"
	"sync"

	"github.com/haptic-io/haptic/renderplan"
	"github.com/haptic-io/haptic/store"
)

// What one render leaves for the next on its engine: the positions of the
// Services and EndpointSlices its renderEach results were checked against
// (the results themselves, in carryBox.segs), the backendServers resolutions it used
// (serverscache.go) and the sizes of its collections. Each render starts from the latest carry and replaces
// it when it ends, so entries of deleted objects go; concurrent renders
// are safe (the last one to finish wins, its parts together).
type renderCarry struct {
	marks   *serviceMarks
	servers map[serversKey]*serversEntry
	hints   sizeHints
}

// serviceMarks are the positions of the Services and EndpointSlices in the
// store a render read, when that store is a [ChangeTracker].
type serviceMarks struct{ services, slices store.Mark }

// carryBox holds an engine's latest carry; safe for concurrent use. A
// carry is never modified once stored.
type carryBox struct {
	mu sync.Mutex
	c  *renderCarry
	// segs are the last render's renderEach segments. Renders change
	// segments in place, so one render at a time takes them; a
	// concurrent render goes without.
	segs []*segment
	// scratch is what renders allocate anew otherwise: kept with its
	// capacity so that the next render does not grow it again; one
	// render at a time takes it, as segs.
	scratch renderScratch
	// plans is the plan cache of the last render that succeeded with it:
	// what NewOutput derived from its backends and maps. It changes during
	// a build, so one render at a time takes it (plansTaken); a
	// concurrent render builds without, and a render that fails drops it.
	plans      *renderplan.Cache
	plansTaken bool
}

// maxCarriedBuf bounds the capacity of a buffer kept between renders.
const maxCarriedBuf = 8 << 20

// renderScratch are a render's reusable buffers: the output buffers
// templates execute into and the arrays the assembly hands to NewOutput.
type renderScratch struct {
	bufs     []*bytes.Buffer
	pieces   []renderplan.Piece
	backends []renderplan.Backend
}

// takeScratch hands the buffers to one render (empty ones to a
// concurrent render).
func (b *carryBox) takeScratch() renderScratch {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.scratch
	b.scratch = renderScratch{}
	return s
}

// putScratch keeps a render's buffers for the next.
func (b *carryBox) putScratch(s renderScratch) {
	kept := s.bufs[:0]
	for _, buf := range s.bufs {
		if buf.Cap() <= maxCarriedBuf {
			kept = append(kept, buf)
		}
	}
	s.bufs = kept
	b.mu.Lock()
	defer b.mu.Unlock()
	b.scratch = s
}

// takePlans hands the plan cache to one render: nil while another render
// has it. A Fresh render gets an empty one, which is kept for the next.
func (b *carryBox) takePlans(fresh bool) *renderplan.Cache {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.plansTaken {
		return nil
	}
	c := b.plans
	if c == nil || fresh {
		c = &renderplan.Cache{}
	}
	b.plans, b.plansTaken = nil, true
	return c
}

// putPlans gives back the plan cache takePlans handed out (c nil: none
// was), keeping it for the next render if keep says the render
// succeeded.
func (b *carryBox) putPlans(c *renderplan.Cache, keep bool) {
	if c == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.plansTaken = false
	if keep {
		b.plans = c
	}
}

// takeSegments hands the segments to one render.
func (b *carryBox) takeSegments() []*segment {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.segs
	b.segs = nil
	return s
}

func (b *carryBox) get() *renderCarry {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.c == nil {
		return &renderCarry{}
	}
	return b.c
}

func (b *carryBox) set(c *renderCarry, segs []*segment) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.c, b.segs = c, segs
}

// sizeHints are the sizes of a render's collections, which the engine's
// next render allocates up front: after the first render a re-render
// builds maps of thousands of entries without growing them.
type sizeHints struct {
	backends int
	// sizes of maps (by path) and claim registries (by name).
	sizes map[string]int
}

func (r *renderState) sizeHints() sizeHints {
	h := sizeHints{backends: len(r.backends), sizes: make(map[string]int, len(r.mapsByKey)+len(r.registries))}
	for name, m := range r.mapsByKey {
		h.sizes[dirMaps+"/"+name] = len(m.entries)
	}
	for name, reg := range r.registries {
		h.sizes[name] = len(reg)
	}
	return h
}

// Compact compacts the plan cache the last render left for the next
// ([renderplan.Cache.Compact]) and reports whether it did: after
// many renders that each added a few backends, the next render walks
// memory again as after one render of them all. It does nothing while a
// render runs, and little when there is nothing to compact, so a caller
// that renders again and again (a controller) calls it after each
// render that it acted on, when nothing waits.
func (e *Engine) Compact() bool {
	c := e.carry.takePlans(false)
	if c == nil {
		return false
	}
	done := c.Compact()
	e.carry.putPlans(c, true)
	return done
}
