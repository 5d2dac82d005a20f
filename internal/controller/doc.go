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
//   - A [Source] sends [Event]s. An Event carries the changes that belong
//     together, applied to the store at once so that a render never sees
//     half of them, and one Event says the initial listing is complete:
//     nothing renders before it. [DirSource] watches a directory of
//     manifests with fsnotify and sends one Event per file; a file that
//     does not parse is an Event with Err, and its objects keep their last
//     good version. [SourceFunc] adapts a function.
//   - The debounce ([DebounceConfig]) holds no isolated change: a change
//     that finds the loop idle renders at once. The changes that arrive
//     while a reconciliation runs are taken when it ends and rendered
//     together by one follow-up, at once; when more than one arrived,
//     changes come faster than reconciliations complete, and the
//     follow-up starts at least StormSpacing (20 ms) after the
//     reconciliation before it started, which bounds a storm to a few
//     reconciliations. An Interval adds a holdoff for harder batching:
//     a change within Interval of the last reconciliation's start waits
//     until none came for Interval, at most MaxDelay.
//   - Rendering uses a [templating.Engine] ([Loop.SetEngine] swaps it).
//     A template error renders nothing and dispatches nothing: HAProxy
//     keeps serving the last plan. Problems with objects leave those
//     objects out. After each reconciliation the loop compacts the
//     engine's memory ([templating.Engine.Compact]).
//   - The gate ([rendergate.Gate] with a [rendergate.Runner]) validates
//     each plan with haproxy -c in the background, after the dispatch,
//     at most one check per [Config].CheckSpacing, and paused while a
//     reconciliation runs when the checker is a [rendergate.Pauser]. A
//     refusal reverts the pods that run the refused plan (to the last plan
//     that passed, or the agent's last-known-good set) and holds new plans
//     until they pass.
//   - Each [Target] is a pod name and an [agentapi.Applier]: an
//     [agentapi.Client] for a remote agent, or any in-process Applier.
//     The pods' states are read while the templates render (prefetch),
//     and each pod's [deployplan.Diff] runs while the plan ID is still
//     being computed (diff ahead). Per pod: skip when it runs the plan
//     already, else Apply with the decision's files and ops, sending
//     patches of the files the pod has when it takes them. A refused patch
//     resends whole bodies once; a version-skew NACK degrades to the full
//     state and a reload; a fence NACK re-reads the state once. Pods are
//     deployed in parallel, their failures aggregated with go-multierror,
//     and a failed dispatch is retried with a doubling backoff.
//   - The loop remembers recent plans by ID, and every plan a pod runs,
//     so that a pod's applied plan ID turns back into the baseline Diff
//     needs; an unknown one means the full state and a reload.
//   - With [Config].IdleGC the loop collects garbage in the quiet after a
//     reconciliation when the next one would otherwise start a
//     collection in the middle of its render and apply.
//
// # Observability
//
// One log line per apply (pod, plan_id, mode, verdict, ops, reasons and
// the time of each stage, the agent's own stages included), [Loop.Status],
// and Prometheus metrics on the Registerer of [Config]:
// haptic_deploy_apply_total{pod,mode}, haptic_haproxy_reloads_total{pod},
// haptic_reconciliation_total, haptic_reconciliation_duration_seconds,
// haptic_render_duration_seconds, haptic_gate_verdicts_total{verdict} and
// more (see metrics.go).
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
