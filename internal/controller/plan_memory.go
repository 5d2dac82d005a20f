package controller

import (
	"sync"

	"github.com/haptic-io/haptic/renderplan"
)

// defaultPlanMemory is how many recent plans a [planMemory] keeps besides
// the ones pods run: the newest two or three cover a pod that committed
// an apply whose answer the dispatcher never saw (its next state names
// the plan). Each plan holds its backends and map entries, about 1 MB at
// 5,000 routes, and an unknown baseline costs only a full-state apply.
const defaultPlanMemory = 3

// planMemory remembers the plans the controller rendered, by ID, so that
// a pod's applied plan ID turns back into the baseline Diff needs. It
// keeps the newest few plans and every plan a pod is known to run. It is
// safe for concurrent use.
type planMemory struct {
	mu     sync.Mutex
	keep   int
	byID   map[string]*renderplan.Plan // guarded by mu
	order  []string                    // guarded by mu; oldest first
	pinned map[string]int              // guarded by mu; plan ID → pods running it
}

func newPlanMemory(keep int) *planMemory {
	if keep <= 0 {
		keep = defaultPlanMemory
	}
	return &planMemory{keep: keep, byID: map[string]*renderplan.Plan{}, pinned: map[string]int{}}
}

// add remembers p under id.
func (m *planMemory) add(id string, p *renderplan.Plan) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.byID[id]; ok {
		return
	}
	m.byID[id] = p
	m.order = append(m.order, id)
	m.evictLocked()
}

// get returns the plan with that ID, nil if unknown.
func (m *planMemory) get(id string) *renderplan.Plan {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.byID[id]
}

// runs records that a pod moved from plan old to plan next (either may be
// "").
func (m *planMemory) runs(old, next string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if old == next {
		return
	}
	if old != "" {
		if m.pinned[old]--; m.pinned[old] <= 0 {
			delete(m.pinned, old)
		}
	}
	if next != "" {
		m.pinned[next]++
	}
	m.evictLocked()
}

// evictLocked forgets the oldest unpinned plans beyond keep.
func (m *planMemory) evictLocked() {
	unpinned := 0
	for _, id := range m.order {
		if m.pinned[id] == 0 {
			unpinned++
		}
	}
	kept := m.order[:0]
	for _, id := range m.order {
		if unpinned > m.keep && m.pinned[id] == 0 {
			delete(m.byID, id)
			unpinned--
			continue
		}
		kept = append(kept, id)
	}
	m.order = kept
}
