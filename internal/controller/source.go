package controller

import (
	"context"
	"fmt"
)

// Source feeds the loop with objects: a directory of manifests in local
// mode ([DirSource]), informers in Kubernetes. Run sends [Event]s on events
// until ctx ends or the source fails, then returns; it must not close
// events. It sends exactly one event with Initialized set, after the
// changes of its initial listing, so that the loop never renders a
// partial world.
type Source interface {
	Run(ctx context.Context, events chan<- Event) error
}

// SourceFunc adapts a function to a [Source].
type SourceFunc func(ctx context.Context, events chan<- Event) error

// Run calls f(ctx, events).
func (f SourceFunc) Run(ctx context.Context, events chan<- Event) error { return f(ctx, events) }

var _ Source = SourceFunc(nil)

// Event is one delivery of a [Source]: the object changes that belong
// together (one manifest file, one informer notification), applied to the
// store at once so that a render never sees half of them; or the end of
// the initial listing; or a problem with the source's input.
type Event struct {
	// Changes are applied in order.
	Changes []Change
	// Initialized marks the end of the initial listing.
	Initialized bool
	// Err is a problem with the input (a manifest that does not parse, an
	// object without a name). The objects it concerns keep their last good
	// version; the other changes of the event still apply.
	Err error
	// Origin names where the event comes from ("file routes/a.yaml"), for
	// logs.
	Origin string
}

// Change is one object added, updated or deleted under a watched-resource
// alias.
type Change struct {
	Alias     string
	Namespace string
	Name      string
	// Object is the new object (JSON-shaped, as templating's store wants
	// it); nil means the object was deleted.
	Object map[string]any
}

// String returns "upsert alias ns/name" or "delete alias ns/name".
func (c Change) String() string {
	verb := "upsert"
	if c.Object == nil {
		verb = "delete"
	}
	return fmt.Sprintf("%s %s %s/%s", verb, c.Alias, c.Namespace, c.Name)
}
