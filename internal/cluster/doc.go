// Package cluster runs HAPTIC's controller in a Kubernetes cluster
// (`haptic controller`): the same controller loop as local mode, fed by
// informers instead of a directory and deploying to the agents of the
// HAProxy pods it discovers.
//
// # Pieces
//
//   - [Source]: one informer per watched resource (any group, version and
//     resource, through the dynamic client), namespace scope and label
//     selector server-side, field selector client-side. It sends one
//     Initialized event once every informer listed and delivered its
//     listing: the loop never renders a half-listed world.
//   - [Pods]: the HAProxy pods of a label selector in a namespace, one
//     agent client per pod at podIP:port with the bearer token. A pod
//     that goes away is forgotten; a re-created pod gets a new client and
//     its agent's empty state makes the next apply full state.
//   - [RunLeader]: leader election on a Lease. The term (the Lease's
//     leaderTransitions + 1) is the fencing token of every apply, so an
//     agent refuses a deposed leader's late apply. Followers keep their
//     store and render; they dispatch nothing, run no gate and write no
//     status, so a takeover serves at once.
//   - [ParseSpec] and the config-load gate: each generation of the
//     HAProxyTemplateConfig is parsed (its template part through
//     templating.ParseConfig, so the resource and `haptic local -c`'s file
//     are one format), compiled and its validation tests run, haproxy_valid
//     included, before it replaces the running one; a refusal keeps the
//     last good config and says why in the Validated condition.
//
// [Run] wires them: a config whose watches or pod selector change starts
// a new loop (its store must be listed anew), one with new templates only
// swaps the engine.
//
// # Gateway mode
//
// A config whose libraries include "gateway" runs one loop per Gateway of
// our GatewayClasses instead of one loop: the informers are listed once
// and their events fan out to every loop (and to a manager with a store
// of its own that builds the gatewayapi model on each change). Each loop
// renders its Gateway's routing model (the controller.Config RenderInput
// puts it at extraContext.gateway and tags the plan with the Gateway's
// generation) and deploys to that Gateway's own HAProxy fleet, which the
// leader provisions in the Gateway's namespace, owned by the Gateway
// ([FleetConfig]: a Deployment, a Service with the listeners' ports, the
// agents' token Secret). The leader writes every Gateway API status the
// model computes, with the fleet's addresses (the Service's load-balancer
// ingress, else its Ready pods' IPs) and the newest Gateway generation
// every Ready pod serves. Gateway mode writes no Ingress status, no
// HAProxyCfg and no problem Events.
//
// # Permissions
//
// The controller reads: its HAProxyTemplateConfig (get, list, watch),
// every watched resource (list, watch), pods in the HAProxy namespace
// (list, watch) and the agent token Secret (get) when the config names
// one. It writes, with server-side apply: the config's status, the
// HAProxyCfg of the same name and its status (get, patch), and the status
// of the Ingresses of its class (ingresses/status: patch); it creates
// Events in events.k8s.io (create, patch) and holds its Lease in
// coordination.k8s.io (get, create, update). Gateway mode also needs,
// cluster-wide: patch on the status of gatewayclasses, gateways,
// httproutes, grpcroutes and tlsroutes; list and watch on pods; get,
// list, create, patch and delete on deployments, services and secrets
// (the fleets).
//
// # What the leader publishes
//
// Besides the config's Validated and Ready conditions: a Warning Event
// (reason = the problem's reason) on each object a render left out, once
// per problem and at most 20 a second; the HAProxy pods' addresses in
// status.loadBalancer of the Ingresses of its class; and an HAProxyCfg
// (plan ID, problems, and the plan each pod runs), at most once per
// configPublishInterval.
//
// # I/O and concurrency
//
// Everything here does network I/O to the apiserver and the agents; the
// gates run haproxy -c as an unprivileged user. [Run] blocks until ctx
// ends and waits for every goroutine it started. [Pods.Targets] and
// [Pods.Addresses] are safe for concurrent use while [Pods.Run] runs.
package cluster
