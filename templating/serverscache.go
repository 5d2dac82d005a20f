package templating

import (
	"reflect"
	"slices"

	"github.com/haptic-io/haptic/renderplan"
)

// An [Engine] keeps its backendServers resolutions from one render to the
// next (in its carry): a resolution is reused while the store returns the
// very same Service and EndpointSlice objects (objects are immutable once
// in a store, and a change replaces the object), so a render after a few
// changes resolves only the Services they touched.

// serversEntry is one resolution and the objects it was made from.
type serversEntry struct {
	svc      map[string]any
	slices   []map[string]any
	servers  []renderplan.Server // shared: never modified
	problems []Problem
}

// resolveEntry returns the resolution of key for this render: the one
// this render already used, else the engine's previous one when its
// objects are still the ones in the store, else a new one.
func (r *renderState) resolveEntry(key serversKey) *serversEntry {
	if e, ok := r.usedServers[key]; ok {
		return e
	}
	if r.segBackends != nil {
		if u := r.segBackends.servers[key]; u != nil {
			return u.e
		}
	}
	return resolveCached(r.e, r.store, &r.prevServers, r.slicesFor(key.ns, key.svc), key)
}

// resolveCached resolves key against store, reusing the previous render's
// resolution (from prev, read-only) when its objects are still the ones
// in the store. Safe for concurrent use.
func resolveCached(e *Engine, store Store, prev *prevResolutions, svcSlices []map[string]any, key serversKey) *serversEntry {
	svc, _ := store.Get(e.serviceAlias, key.ns, key.svc)
	if p := prev.get(key); p != nil && p.current(svc, svcSlices) {
		return p
	}
	servers, problems := resolveServers(svc, svcSlices, key)
	return &serversEntry{svc: svc, slices: slices.Clone(svcSlices), servers: servers, problems: problems}
}

// current reports whether e was made from these very objects.
func (e *serversEntry) current(svc map[string]any, svcSlices []map[string]any) bool {
	return sameObject(e.svc, svc) && slices.EqualFunc(e.slices, svcSlices, sameObject)
}

// useServers makes e this render's resolution of key; its problems are
// reported on the first use.
func (r *renderState) useServers(key serversKey, e *serversEntry) {
	if _, done := r.usedServers[key]; done {
		return
	}
	r.usedServers[key] = e
	r.problems = append(r.problems, e.problems...)
}

// sameObject reports whether a and b are the same map (not equal ones).
func sameObject(a, b map[string]any) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

// prevResolutions are the resolutions the engine's previous render used:
// its own and those its segments hold (segment.go). Read-only while
// renderEach workers run.
type prevResolutions struct {
	own  map[serversKey]*serversEntry
	segs []map[serversKey]*serversUse
}

func (p *prevResolutions) get(key serversKey) *serversEntry {
	if e := p.own[key]; e != nil {
		return e
	}
	for _, m := range p.segs {
		if u := m[key]; u != nil {
			return u.e
		}
	}
	return nil
}
