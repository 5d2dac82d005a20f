// Package store holds the watched objects a render reads: unstructured
// Kubernetes objects (JSON-shaped map[string]any, integral numbers as
// int64) filed per watched-resource alias, with the indexes each alias
// declares, and immutable snapshots of them.
//
// A [Memory] is fed by a source — [LoadDir] for a directory of manifests,
// Kubernetes informers in a cluster — through Add, Update, Delete, Replace
// and AddObjects, which are cheap: no index work happens until the next
// [Memory.Snapshot]. A [Snapshot] is what a render reads (package
// templating consumes it through its small Store interface): List, Get,
// Fetch by the indexBy values, and ListBy an index expression. Taking a
// snapshot costs nothing when nothing changed and otherwise derives the
// views of the changed aliases from their previous ones: O(k log n) for k
// changes to an alias of n objects, plus copying the sorted slices the
// changes touch. Views are persistent hash tries, so a
// derived view shares everything the changes did not touch.
//
// Snapshots derived one from another record their changes in a change
// log, so [Snapshot.ChangesSince] can say which objects and index keys
// changed in an alias since a [Snapshot.Mark] of an earlier one; a
// renderer uses it to re-check only what changed.
//
// # Objects and expressions
//
// [DecodeManifests] decodes multi-document YAML (1.1, as kubectl reads it)
// or JSON, flattening kind List. [LoadDir] files each object under every
// alias whose apiVersion equals the object's and whose resource is
// [ResourceForKind] of its kind. indexBy expressions ([ParseIndexExpr])
// are field paths such as metadata.namespace or
// metadata.labels["kubernetes.io/service-name"]; [IndexExpr.Eval] gives
// the string an index compares ([ScalarString]).
//
// # I/O and concurrency
//
// The package does no I/O except [LoadDir], which reads files. A [Memory]
// is safe for concurrent use; a [Snapshot] is immutable and safe to share.
// Slices returned by List, Fetch and ListBy are shared: never modify them,
// and never modify an object after handing it to a store.
package store
