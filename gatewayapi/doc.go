// Package gatewayapi resolves the Gateway API objects of a render's store
// into the routing model that the stock gateway library renders, and into
// every status the Gateway API specification asks for. It does no I/O and
// imports no Kubernetes client: it reads a [templating.Store] and returns
// plain values.
//
// # Objects, model, output
//
// [Build] reads the aliases that the gateway library watches
// (gatewayclasses, gateways, httproutes, grpcroutes, tlsroutes,
// referencegrants, services, secrets, namespaces) once and computes, for
// every Gateway of a GatewayClass whose controllerName is ours, which
// listeners are valid, which routes attach to which listener, which
// backends resolve, and in what order HTTP route rules are tried. The
// result is a [Model]:
//
//   - [Model.RenderContext] is the per-Gateway routing model, a JSON-shaped
//     value that the render loop hands to the templates at
//     .extraContext.gateway; templates only turn it into HAProxy
//     configuration.
//   - [Model.Statuses] is the whole .status of every GatewayClass, Gateway
//     and route the controller owns, ready for server-side apply; what the
//     data plane runs (addresses, the generation the pods acknowledged)
//     comes in through a [Fleet] per Gateway.
//
// Attachment, precedence and conditions are decided here, in one place,
// so that they are unit-tested without HAProxy and the same decision feeds
// both the configuration and the status.
//
// # Concurrency
//
// A [Model] is immutable once built; its methods may be called from any
// number of goroutines. Build never panics, whatever the objects hold.
package gatewayapi
