// Package echo serves the tiny HTTP backends that `haptic local --echo`
// (the demo) and `haptic benchmark propagation` route to: each server
// names itself in every answer, so a client sees which backend HAProxy
// chose.
//
// It does network I/O: [Start] listens on the addresses it is given (the
// callers pass loopback ones). [Servers] is safe for concurrent use;
// [Servers.Close] waits for the serving goroutines.
package echo
