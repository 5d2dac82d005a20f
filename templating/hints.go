package templating

import "sync"

// sizeHints are the sizes of a render's collections, which the engine's
// next render allocates up front: after the first render a re-render
// builds maps of thousands of entries without growing them.
type sizeHints struct {
	backends int
	// sizes of maps (by path) and claim registries (by name).
	sizes map[string]int
}

// hintsBox holds an engine's latest hints; safe for concurrent use.
type hintsBox struct {
	mu sync.Mutex
	h  sizeHints
}

func (b *hintsBox) get() sizeHints {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.h
}

func (b *hintsBox) set(h sizeHints) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.h = h
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
