package agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/haptic-io/haptic/agentapi"
	"github.com/haptic-io/haptic/haproxysock"
)

// opSession is the stats-socket session an apply's ops run on, dialled
// ahead of them.
type opSession struct {
	sess  *haproxysock.Session
	ready chan struct{} // closed once the warm-up is over
}

// warmSession opens the session the ops of an apply will run on and, in
// the background, dials it and sends its setup with "show version", so
// that the connection is ready when the files are staged and swapped and
// the first op pays one round trip, not a dial and the setup too. The
// caller holds applyMu, so no reload moves the session to another worker
// before the ops run, and must call close. A warm-up that fails ends the
// session: the first op then fails with its cause, as it would have
// failed to dial.
func (a *Agent) warmSession(ctx context.Context) *opSession {
	s := &opSession{sess: a.sock.Session(), ready: make(chan struct{})}
	go func() {
		defer close(s.ready)
		_, _ = s.sess.Run(ctx, haproxysock.ShowVersion())
	}()
	return s
}

// close waits for the warm-up and closes the session; closing twice is
// allowed.
func (s *opSession) close() {
	if s == nil {
		return
	}
	<-s.ready
	_ = s.sess.Close()
}

// runOps runs the ops in order on the worker socket and stops at the first
// failure, returning its index and HAProxy's reply; -1 when every op
// passed. Ops that can share a round trip do (see [opBatches]): a refusal
// among them stops the apply after their batch. Server and backend
// deletes that are not removable yet are deferred (see deletes.go). All
// ops run on one stats-socket session (see [Agent.warmSession]) instead
// of a connection and its setup per op. The caller holds applyMu, so no
// reload moves the session to an old worker; a transport failure ends the
// session and, being an op failure, the loop.
func (a *Agent) runOps(ctx context.Context, ws *opSession, p *plannedApply, res *agentapi.ApplyResult, log *slog.Logger) (int, string) {
	// Closed as soon as the ops are done: a connection left open to a
	// worker that a fallback reload retires would keep it alive.
	defer ws.close()
	<-ws.ready
	r := opRun{a: a, sess: ws.sess, res: res, log: log, deferredBackends: map[string]bool{}}
	r.env = CommandEnv{
		Deletes: DeleteAtOnce,
		ReadFile: func(path string) ([]byte, error) {
			if b, ok, err := p.body(path); ok || err != nil {
				return b, err
			}
			if err := checkPath(path); err != nil {
				return nil, err
			}
			return a.base.ReadFile(path)
		},
	}
	for _, b := range opBatches(p.ops) {
		if idx, msg := r.batch(ctx, p.ops, b[0], b[1]); idx >= 0 {
			return idx, msg
		}
	}
	return -1, ""
}

// opRun is the state of one apply's ops.
type opRun struct {
	a                *Agent
	sess             *haproxysock.Session
	env              CommandEnv
	res              *agentapi.ApplyResult
	log              *slog.Logger
	deferredBackends map[string]bool // backends whose server deletes were deferred
}

// record appends an op's result and counts it.
func (r *opRun) record(op agentapi.Op, res agentapi.OpResult, outcome string) {
	r.res.Ops = append(r.res.Ops, res)
	r.a.metrics.ops.WithLabelValues(op.Kind.String(), outcome).Inc()
}

// batch runs ops[lo:hi] in one round trip and returns the index and reply
// of the first that failed, or -1. Every op of the batch ran, and has its
// result, whatever the outcome of those before it.
func (r *opRun) batch(ctx context.Context, ops []agentapi.Op, lo, hi int) (int, string) {
	if hi-lo == 1 {
		return r.one(ctx, lo, ops[lo])
	}
	var cmds []haproxysock.Command
	ends := make([]int, 0, hi-lo) // ops[lo+k]'s commands end at cmds[ends[k]]
	for i := lo; i < hi; i++ {
		cs, err := Commands(ops[i], r.env)
		if err != nil {
			// Run what comes before it, as a batch per op would have.
			if idx, msg := r.batch(ctx, ops, lo, i); idx >= 0 {
				return idx, msg
			}
			r.record(ops[i], agentapi.OpResult{Index: i, Op: ops[i].String(), Reply: err.Error()}, "failed")
			return i, err.Error()
		}
		cmds = append(cmds, cs...)
		ends = append(ends, len(cmds))
	}
	results, err := r.sess.Run(ctx, cmds...)
	if results == nil && err != nil {
		// Refused before anything was sent (a command too long for the
		// socket): one op at a time finds which.
		for i := lo; i < hi; i++ {
			if idx, msg := r.one(ctx, i, ops[i]); idx >= 0 {
				return idx, msg
			}
		}
		return -1, ""
	}
	failed, why := -1, ""
	start := 0
	for k, end := range ends {
		i, sub := lo+k, results[start:end]
		start = end
		res := agentapi.OpResult{Index: i, Op: ops[i].String(), Reply: joinReplies(sub), OK: true}
		for _, c := range sub {
			if c.Err != nil {
				res.OK = false
				if res.Reply == "" {
					res.Reply = c.Err.Error()
				}
				if failed < 0 {
					failed, why = i, failureText(c.Err, res.Reply)
				}
				break
			}
		}
		outcome := "ok"
		if !res.OK {
			outcome = "failed"
		}
		r.record(ops[i], res, outcome)
	}
	return failed, why
}

// one runs op i alone: its commands in one batch (two for a map
// replace), a delete that is not removable yet deferred.
func (r *opRun) one(ctx context.Context, i int, op agentapi.Op) (int, string) {
	res := agentapi.OpResult{Index: i, Op: op.String()}
	if op.Kind == agentapi.OpDelBackend && r.deferredBackends[op.Backend] {
		if err := r.a.deferDelete(op); err != nil {
			res.Reply = err.Error()
			r.record(op, res, "failed")
			return i, res.Reply
		}
		res.OK, res.Reply = true, "deferred: servers of the backend are still being deleted"
		r.record(op, res, "deferred")
		return -1, ""
	}
	results, err := RunOp(ctx, r.sess, op, r.env)
	res.Reply = joinReplies(results)
	if err != nil && (op.Kind == agentapi.OpDelServer || op.Kind == agentapi.OpDelBackend) && notRemovableYet(results) {
		if derr := r.a.deferDelete(op); derr != nil {
			res.Reply = derr.Error() + "; " + res.Reply
			r.record(op, res, "failed")
			return i, res.Reply
		}
		if op.Kind == agentapi.OpDelServer {
			r.deferredBackends[op.Backend] = true
		}
		res.OK, res.Reply = true, "deferred: "+res.Reply
		r.record(op, res, "deferred")
		r.log.Info("delete deferred until removable", "op", i, "target", op.Target())
		return -1, ""
	}
	if err != nil {
		if res.Reply == "" {
			res.Reply = err.Error()
		}
		r.record(op, res, "failed")
		return i, failureText(err, res.Reply)
	}
	res.OK = true
	r.record(op, res, "ok")
	return -1, ""
}

// failureText is HAProxy's reply to the refused command when there is
// one, else the error.
func failureText(err error, reply string) string {
	var ce *haproxysock.CommandError
	if errors.As(err, &ce) && strings.TrimSpace(ce.Reply) != "" {
		return ce.Command + ": " + strings.TrimSpace(ce.Reply)
	}
	if reply != "" {
		return reply
	}
	return err.Error()
}

func joinReplies(results []haproxysock.Result) string {
	var parts []string
	for _, r := range results {
		if s := strings.TrimSpace(r.Reply); s != "" {
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, "\n")
}

// notRemovableYet reports whether a delete failed only because the object
// still has connections or streams (or servers, for a backend).
func notRemovableYet(results []haproxysock.Result) bool {
	for _, r := range results {
		if r.Err == nil {
			continue
		}
		reply := r.Reply
		switch {
		case strings.Contains(reply, "Wait delay expired"),
			strings.Contains(reply, "still has connections"),
			strings.Contains(reply, "still has attached streams"),
			strings.Contains(reply, "Only a backend without server"):
		default:
			return false
		}
	}
	return true
}

// deleteTarget names a deferred delete for logs.
func deleteTarget(op agentapi.Op) string {
	if op.Kind == agentapi.OpDelServer {
		return fmt.Sprintf("server %s/%s", op.Backend, op.Server)
	}
	return "backend " + op.Backend
}
