// Package heapgoal keeps the Go heap of a long-running process within an
// absolute headroom of its live size.
//
// Under the default GOGC of 100 the runtime lets the heap grow to twice
// what the last collection found live before it collects again. A
// controller whose live heap is 115 MB (the decoded objects and render
// caches of 5,000 Ingresses, each with a Service and two EndpointSlices)
// then peaks at about 230 MB of heap while those objects stream in, and
// that peak, not the live heap, is what a container's memory limit must
// hold. A [Governor] lowers GOGC after every collection so that the next
// goal is the live heap plus a fixed [Config].Headroom: small heaps keep
// the process's own GOGC (their collections stay as rare as before), large
// ones collect more often instead of doubling.
//
// The package does I/O on the Go runtime only: it reads runtime/metrics
// and sets the GC percent, which is process-wide state, so start at most
// one Governor per process, from main. A Governor's methods are safe for
// concurrent use.
package heapgoal
