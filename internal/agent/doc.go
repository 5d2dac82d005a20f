// Package agent is the runtime of HAPTIC's per-pod agent. So far it holds
// the one mapping from typed ops ([agentapi.Op]) to HAProxy runtime
// commands ([Commands], [RunOp]); the file tree, journal, reloads and the
// apply transaction come with the agent issue.
//
// The mapping is pure; [RunOp] does I/O through a [haproxysock.Client].
// Everything here is safe for concurrent use.
package agent
