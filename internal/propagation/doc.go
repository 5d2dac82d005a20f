// Package propagation is `haptic benchmark propagation`: [Run] starts
// local mode (package internal/local) on a real HAProxy with the stock
// libraries and two echo backends, then times route adds (object written →
// first HTTP 200 through HAProxy) and route changes (continuous traffic
// while one route's backend flips) against it.
//
// Its poller and its echo backends run as goroutines or, with
// [Config.ProbeCommand] and [Config.EchoCommand], as child processes
// running [RunProbeClient] (`haptic benchmark probe-client`: hosts on
// stdin, JSON lines on stdout) and [RunEchoServers] (`haptic benchmark
// echo-servers`), so that local mode's busy goroutines delay neither the
// poller's timers nor the backends' answers.
//
// # I/O and concurrency
//
// Run does I/O of every kind through local mode and sends HTTP requests
// to loopback addresses only. It waits for the child processes it starts
// (killing one that does not exit within 5 s of its stdin's end, or when
// ctx ends) before it returns. RunProbeClient sends HTTP requests to its
// URL only; RunEchoServers listens where told. Every load loop is bounded
// by the route and flip counts of its Config.
package propagation
