package gatewayapi

import "github.com/haptic-io/haptic/store"

// attachMarks returns the views of marks that decide how a resolved
// route attaches: the Gateways and their classes, and what their
// listeners read (certificate Secrets, ReferenceGrants, namespace
// labels); every view but those of the routes and Services, which decide
// the route template the memo belongs to.
func attachMarks(marks inputMarks) inputMarks {
	for i, a := range readAliases {
		switch a {
		case AliasHTTPRoutes, AliasGRPCRoutes, AliasTLSRoutes, AliasServices:
			marks[i] = store.Mark{}
		}
	}
	return marks
}

// attachMemo is how a route template attached in one Build: the
// listeners it joined, valid in every later Build of the same attach
// epoch (see Cache.attachEpoch), where the same Gateways resolve to the
// same listeners in the same order.
type attachMemo struct {
	epoch uint64 // 0: none
	joins []join
}

// join is one listener a route attached to: the Gateway's place in
// Model.order and the attachment, which names the listener by its place
// in the Gateway's.
type join struct {
	gw int
	a  *attachedRoute
}

// attachEpoch returns the epoch of a Build of the views marks (ok false:
// unknown) with controller name ctl: the last Build's when the views
// that decide attachments (see attachMarks) are the same, else a new
// one; 0 when unknown. The caller holds the Cache's lock.
func (c *Cache) attachEpoch(marks inputMarks, ok bool, ctl string) uint64 {
	if !ok {
		c.attachKnown = false
		return 0
	}
	am := attachMarks(marks)
	if !c.attachKnown || am != c.attachMarks || ctl != c.attachController {
		c.epoch++
		c.attachKnown, c.attachMarks, c.attachController = true, am, ctl
	}
	return c.epoch
}

// rejoin attaches a route to the listeners of joins, as the Build that
// recorded them did.
func (m *Model) rejoin(joins []join) {
	for _, j := range joins {
		g := m.order[j.gw]
		g.listeners[j.a.li].attached++
		g.join(j.a)
	}
}

// presize gives the route lists of gs the room the last Build's lists of
// the same Gateways took, and one more: a route add then grows none.
func (c *Cache) presize(gs []*gateway) {
	if c.last == nil {
		return
	}
	for _, g := range gs {
		if lg := c.last.all[g.ref]; lg != nil {
			g.http, g.grpc, g.tls = room(lg.http), room(lg.grpc), room(lg.tls)
		}
	}
}

// join adds a to the routes of g of its kind.
func (g *gateway) join(a *attachedRoute) {
	switch a.r.kind {
	case kindHTTP:
		g.http = append(g.http, a)
	case kindGRPC:
		g.grpc = append(g.grpc, a)
	case kindTLS:
		g.tls = append(g.tls, a)
	}
}

// room returns an empty list with room for one more route than last
// holds, or nil when last holds none.
func room(last []*attachedRoute) []*attachedRoute {
	if len(last) == 0 {
		return nil
	}
	return make([]*attachedRoute, 0, len(last)+1)
}
