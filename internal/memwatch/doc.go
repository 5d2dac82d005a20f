// Package memwatch measures a process's memory the way an operator sees
// it: the resident set now and at its peak (VmRSS and VmHWM of
// /proc/<pid>/status), and, for this process, the Go heap as the runtime
// counts it. A [Watcher] samples this process while a benchmark runs and
// can write a heap profile at each new high of the live heap, so that the
// profile shows what was live at the peak rather than after it.
//
// It reads /proc (Linux only; elsewhere [Read] returns an error) and the
// runtime's metrics. A Watcher's methods are safe for concurrent use.
package memwatch
