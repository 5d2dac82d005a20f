package runtimeop

// Verdict says how a plan reaches a pod: the planner decides it and the
// agent acts on it.
type Verdict string

// Verdicts, from the least to the most disruptive.
const (
	// VerdictNoop: nothing changed.
	VerdictNoop Verdict = "noop"
	// VerdictFileOnly: write the files; the running HAProxy need not learn
	// anything.
	VerdictFileOnly Verdict = "file_only"
	// VerdictRuntime: write the files and run the ops on the worker socket.
	VerdictRuntime Verdict = "runtime"
	// VerdictReload: write the files and reload.
	VerdictReload Verdict = "reload"
)
