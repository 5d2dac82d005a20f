// Package haproxytest starts real HAProxy processes for tests. It is
// test-only: production code must not import it.
//
// # Binaries
//
// [Binary] returns the haproxy binary of a series ("3.0", "3.2", "3.4"; see
// [AllSeries]) from <repo>/.cache/haproxy/<series>/sbin/haproxy, running
// hack/install-haproxy.sh when it is missing. Under `go test -short` it skips
// the test; when no binary can be had it skips, or fails when CI=true.
//
// # Instances
//
// [Start] runs HAProxy in master-worker mode as a child process in its own
// process group, with a worker stats socket (level admin) and a master CLI
// socket, waits until both answer and stops it in t.Cleanup. [Instance.Cmd]
// and [Instance.MasterCmd] send one raw command for assertions.
//
// # Traffic
//
// [StartEcho] starts an HTTP server on 127.0.0.1 that answers with its name,
// and [Get] sends one request with a Host header. Everything listens on
// loopback only.
//
// # I/O and concurrency
//
// The package does I/O: it runs processes, writes files under temporary
// directories and uses unix and TCP sockets on 127.0.0.1. Its functions may be
// called from parallel tests; an [Instance] and an [Echo] may be used from
// several goroutines.
package haproxytest
