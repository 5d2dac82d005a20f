package templating

import (
	"reflect"
	"slices"
	"sync"

	"github.com/haptic-io/haptic/renderplan"
)

// serversCache keeps an [Engine]'s backendServers resolutions from one
// render to the next: a resolution is reused while the store returns the
// very same Service and EndpointSlice objects (objects are immutable once
// in a store, and a change replaces the object), so a render after a few
// changes resolves only the Services they touched. Each render replaces
// the cache with the resolutions it used, so entries of deleted objects
// go. Safe for concurrent renders.
type serversCache struct {
	mu sync.Mutex
	m  map[serversKey]*serversEntry
}

// serversEntry is one resolution and the objects it was made from.
type serversEntry struct {
	svc      map[string]any
	slices   []map[string]any
	servers  []renderplan.Server // shared: never modified
	problems []Problem
}

func (c *serversCache) get(k serversKey) *serversEntry {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[k]
}

// size is the number of resolutions the last render used.
func (c *serversCache) size() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}

func (c *serversCache) replace(m map[serversKey]*serversEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m = m
}

// resolveServersCached is resolveServers, reusing the engine's previous
// resolution when its objects are the same; problems are replayed.
func (r *renderState) resolveServersCached(key serversKey) []renderplan.Server {
	svc, _ := r.store.Get(r.e.serviceAlias, key.ns, key.svc)
	svcSlices := r.slicesFor(key.ns, key.svc)
	if e := r.e.servers.get(key); e != nil && sameObject(e.svc, svc) && slices.EqualFunc(e.slices, svcSlices, sameObject) {
		r.problems = append(r.problems, e.problems...)
		r.usedServers[key] = e
		return e.servers
	}
	start := len(r.problems)
	servers := r.resolveServers(key.ns, key.svc, key.portName, key.portNum, key.object)
	r.usedServers[key] = &serversEntry{
		svc:      svc,
		slices:   slices.Clone(svcSlices),
		servers:  servers,
		problems: slices.Clone(r.problems[start:]),
	}
	return servers
}

// sameObject reports whether a and b are the same map (not equal ones).
func sameObject(a, b map[string]any) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}
