package controller

import (
	"github.com/haptic-io/haptic/store"
	"github.com/haptic-io/haptic/templating"
)

// World is what the loop renders now: its engine and a snapshot of its
// store, for a render beside the loop's own (an admission review's
// candidate). Renders on the loop's engine are safe while the loop
// runs and share its warm state (templating.Engine carries what one
// render found to the next).
type World struct {
	// Engine is the loop's current engine.
	Engine *templating.Engine
	// Snapshot is the store as of now, with the overlays asked for.
	Snapshot *store.Snapshot
	// Initialized: the source delivered its initial listing. Before it the
	// store holds part of the world at most.
	Initialized bool
	// Problems are the object problems of the loop's last render (of the
	// store without the overlays, as of that render).
	Problems []templating.Problem
	// PlanID is the plan the loop last rendered.
	PlanID string
}

// Candidate returns the loop's world with the overlays in its snapshot
// (see [store.Memory.SnapshotWith]); the loop's store is not changed.
func (l *Loop) Candidate(overlays ...store.Overlay) (World, error) {
	snap, err := l.store.SnapshotWith(overlays...)
	if err != nil {
		return World{}, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return World{
		Engine:      l.engine,
		Snapshot:    snap,
		Initialized: l.status.Initialized,
		Problems:    append([]templating.Problem(nil), l.status.Problems...),
		PlanID:      l.status.PlanID,
	}, nil
}
