// Package haproxysock speaks HAProxy's runtime API: the worker stats socket
// (level admin) and the master CLI socket of a master-worker HAProxy. It is
// the only package of HAPTIC that knows the socket protocol. It does I/O
// (unix-socket connections); the command builders and reply parsers do none.
//
// # Commands
//
// Every command HAPTIC sends is built by a typed builder such as
// [AddServer], [SetMap] or [AddMapPayload], which returns a [Command] or an
// error. Builders check every field and escape free text with HAProxy's CLI
// rules (a backslash before space, ';', backslash and quotes); characters
// that cannot be escaped safely (newlines, NUL, other control characters,
// "<<") are refused. No field value can therefore add a second command to
// the line or switch the session into payload mode. [Command.String] is the
// exact wire line.
//
// # Worker socket
//
// [Client.Run] sends a batch of commands on one connection in interactive
// mode ("prompt"), one command per line, and reads until every answer and a
// final sentinel ("show version") have arrived: closing earlier would make
// HAProxy drop the queued commands silently. Each command gets a [Result];
// a refused command carries a [*CommandError] with the line sent and
// HAProxy's reply verbatim. Payload commands whose lines add up to more
// than the session buffer (tune.bufsize, [Client.BufSize]) are split into
// several commands when they may be (map entries, crt-list entries) and
// refused otherwise, because HAProxy 3.0 hangs and 3.2 closes the
// connection on an oversized line or payload.
//
// A [Session] ([Client.Session]) runs several such batches one after the
// other on one connection: it dials on its first Run, switches the
// connection to interactive mode once, and then costs one round trip per
// batch, each batch still ending with its own sentinel. A refused command
// leaves it usable; a transport or framing failure ends it
// ([ErrSessionClosed]). [Client.Run] is a session used for one batch.
//
// # Master socket
//
// [Master.Reload] runs a synchronous reload and returns HAProxy's startup
// log and [ALERT] lines; [Master.ShowProc] lists the processes and tells
// which worker is serving, whatever the version; [Master.RunOnWorker]
// routes commands to one worker (old ones included) by PID. "wait"
// commands only work on the worker socket: routed through the master,
// HAProxy interrupts them.
//
// # Concurrency
//
// [Client] and [Master] hold configuration only. Their methods may be
// called from several goroutines at once; each call uses its own
// connection. A [Session] owns one connection: its Runs are serialised. HAProxy itself serialises nothing across connections, so
// callers that need an order between batches must wait for one Run before
// starting the next. Every read and write is bounded by the context and by
// the per-operation timeout.
package haproxysock
