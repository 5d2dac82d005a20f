// Package controller is HAPTIC's controller loop: a [Source] of objects
// feeds a store; changes are debounced; the templates render the store
// into files and a plan; the render gate decides whether to dispatch at
// once; and for every target pod the plan is diffed against what the pod
// runs and applied through the agent contract.
//
//	Source ─events─▶ store ─debounce─▶ render ─▶ gate ─▶ per pod: State → Diff → Apply
//
// # Pieces
//
//   - [Source] is the one thing that differs between local mode and
//     Kubernetes: [DirSource] watches a directory of manifests with
//     fsnotify; the Kubernetes controller feeds informer notifications as
//     [Event]s. An Event carries the changes that belong together (one
//     file), so a render never sees half of them, and one Event says the
//     initial listing is complete: nothing renders before it.
//   - The debounce is leading-edge ([DebounceConfig]): a change after a
//     quiet interval renders at once; changes inside the interval wait
//     until none came for the interval, at most MaxDelay. Zero disables it.
//   - Rendering uses a [templating.Engine] ([Loop.SetEngine] swaps it).
//     A template error renders nothing and dispatches nothing: HAProxy
//     keeps serving the last plan. Problems with objects leave those
//     objects out.
//   - The gate ([rendergate.Gate] with a [rendergate.Runner]) validates
//     each plan with haproxy -c in the background. A refusal reverts the
//     pods that run the refused plan (to the last plan that passed, or the
//     agent's last-known-good set) and holds new plans until they pass.
//   - Each [Target] is a pod name and an [agentapi.Applier]: an
//     [agentapi.Client] for a remote agent, or any in-process Applier.
//     Per pod: State, then [deployplan.Diff] against the plan the pod runs
//     (remembered by ID), then Apply. A version-skew NACK degrades to the
//     full state and a reload; a fence NACK re-reads the state once. The
//     pods' failures are aggregated with go-multierror.
//   - With [Config].IdleGC the loop collects garbage in the quiet after a
//     reconciliation when the next one would otherwise start a
//     collection in the middle of its render and apply: a mark phase
//     beside a render made it several times slower (the tail of route
//     propagation at thousands of routes).
//
// # Observability
//
// One log line per apply (pod, plan_id, mode, verdict, ops, reasons and
// the time of each stage), [Loop.Status], and Prometheus metrics on the
// Registerer of [Config]: haptic_deploy_apply_total{pod,mode},
// haptic_haproxy_reloads_total{pod}, haptic_reconciliation_total,
// haptic_reconciliation_duration_seconds, haptic_render_duration_seconds,
// haptic_gate_verdicts_total{verdict} and more (see metrics.go).
//
// # I/O and concurrency
//
// The package does I/O through its collaborators: DirSource reads files
// and watches directories, the gate's checker runs haproxy, targets talk
// to agents. [Loop.Run] is one goroutine that owns the store's updates,
// the debounce and the dispatches; it starts the source, the gate runner
// and idle collections, and waits for them before it returns. Pods of one
// dispatch are deployed in parallel. [Loop.Status], [Loop.Trigger] and
// [Loop.SetEngine] are safe from any goroutine.
package controller
