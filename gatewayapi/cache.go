package gatewayapi

import (
	"sync"
)

// Cache keeps the typed form of the objects one [Build] decoded, so that
// the next Build of a store where few objects changed decodes only those.
// Objects are keyed by alias, namespace, name and metadata.resourceVersion
// (an object without resourceVersion, as manifests from files may be, is
// decoded every time). Each Build forgets the entries its store no longer
// holds. A Cache is safe for concurrent use; Builds that share one take
// turns on it. The zero value is ready to use.
type Cache struct {
	mu      sync.Mutex
	entries map[cacheKey]any
	next    map[cacheKey]any
}

type cacheKey struct {
	alias, namespace, name, resourceVersion string
}

// begin starts one Build's use of the cache.
func (c *Cache) begin() {
	c.mu.Lock()
	c.next = make(map[cacheKey]any, len(c.entries))
}

// end keeps the entries this Build used and drops the others.
func (c *Cache) end() {
	c.entries, c.next = c.next, nil
	c.mu.Unlock()
}

func (c *Cache) get(k cacheKey) (any, bool) {
	v, ok := c.entries[k]
	if ok {
		c.next[k] = v
	}
	return v, ok
}

func (c *Cache) put(k cacheKey, v any) { c.next[k] = v }
