// Package rendergate is the validation gate between rendering and
// dispatch: it checks a rendered [renderplan.Output] with HAProxy itself
// (`haproxy -c -dr`) and decides, per plan, whether to dispatch now,
// validate first, or revert the pods that run a refused plan.
//
// # Checking
//
// [renderplan.Checker] is the one-method interface the gate consumes
// (declared beside the [renderplan.Output] it checks, so that the template
// tests take the same checkers); [renderplan.CheckerFunc] adapts a
// function. [HAProxyChecker], made by [NewHAProxyChecker] from a
// [Config], lays the output's files out in a fresh scratch directory exactly
// as the agent lays out its tree and runs `haproxy -c -dr -f haproxy.cfg`
// with that directory as working directory, so relative map, certificate
// and Lua paths resolve as they will in the pod. `-dr` makes unresolvable
// server names a notice instead of an error: the checker has no DNS. `-q` is
// not used, since it hides the [ALERT] lines on 3.0, 3.2 and 3.4. Exit 0 is a
// pass, warnings included; any other exit, including 2 ("no listener"), a
// signal or the timeout, is a refusal: a [*CheckError] (reach it with
// errors.As) carrying the plan ID, exit code, HAProxy's [ALERT] lines and
// its output. Errors that are not refusals (the binary cannot run, the
// context ended) map to [VerdictUnknown] through [VerdictOf], so a broken
// checker never reverts a pod.
//
// # Validation is code execution
//
// HAProxy runs code while it parses a configuration: `lua-load` executes
// Lua (which has io.open, io.popen and os.execute), map, certificate and
// Lua paths may name any file, and a map converter quotes the lines of a
// file it cannot parse in its [ALERT]. The lesson of ingress-nginx's
// CVE-2025-1974 is to treat the check like running untrusted code, so
// HAProxyChecker runs haproxy:
//   - with an empty environment (no tokens or settings leak through
//     "${VAR}" expansion or os.getenv) and stdin from /dev/null;
//   - in its own process group, killed whole at the timeout (default 10 s),
//     with its output capped (default 64 KiB);
//   - when the controller runs as root, as uid/gid 65534 (nobody, no
//     supplementary groups; [Config.RunAs] overrides), owning only its
//     scratch tree (directories 0700, files 0600), so files only root can
//     read, such as /etc/shadow, cannot be opened, quoted in an alert or
//     read by Lua. Kubernetes mounts the service-account token 0644 unless
//     told otherwise: give it defaultMode 0400 (or 0440) so that the check
//     user cannot read it;
//   - in a new network namespace (Linux: CLONE_NEWNET as root, or a user
//     namespace plus a network namespace as another user), so neither Lua
//     nor a name lookup can reach any network, not even the host's
//     loopback. When the namespace cannot be created (no CAP_SYS_ADMIN and
//     unprivileged user namespaces disabled, as in most containers, or not
//     Linux) [NewHAProxyChecker] logs a warning and the checker runs WITHOUT network
//     isolation; [HAProxyChecker.NetworkIsolated] reports which.
//
// [CheckServer] and [RemoteChecker] move the check into another process,
// over HTTP on a Unix socket (`haptic checker` and the controller's
// --checker-socket): in Kubernetes, a container that mounts none of the
// controller's credentials, so that no path a template names reaches
// them. Each client names a lane, which has a checker (and a Pause) of
// its own on the server.
//
// What it does not protect against: Lua still executes, as the check user,
// for up to the timeout; it can read world-readable files, write where that
// user may (for example /tmp) and use CPU and memory (no resource limits
// are set beyond the timeout). As non-root the check runs as the
// controller's own user, so anything the controller can read, a hostile
// configuration can read and quote in a refusal, which the controller may
// log or publish in a status; a root controller (whose checks drop to
// nobody) or files kept unreadable to the controller's user close this.
// Without the network namespace, a hostile server name can leak data
// through DNS. The checker does not read or filter the configuration: it
// relies on the stock template libraries never letting object fields place
// directives, so hostile configuration takes a hostile template author.
// The logs name the plan ID; HAProxy's output goes only into CheckError.
//
// # The gate
//
// [Gate] is the asynchronous gate of the design (§6) as a pure state
// machine. [Gate.Admit] says whether to dispatch a plan now and whether to
// validate it; [Gate.Record] takes a verdict and the pods' applied plan IDs
// and returns a [Revert] (mode [ModeRevertLKG]) for every pod that runs a
// refused plan. The gate starts optimistic (dispatch at once, validate in
// the background); a refusal latches it to validate-before-dispatch until a
// plan passes. Verdicts are remembered per plan ID, for the last
// [DefaultMemory] plans used by default.
//
// [Runner] is the background slot: [Runner.Submit] queues an output and
// returns, [Runner.Run] checks one output at a time and hands each
// [Result] (with its output, to dispatch after a pass) to a callback.
// While a check runs only the newest submitted output waits; older ones
// are reported superseded ([ErrSuperseded]). [RunnerConfig.Spacing] puts a
// rest between checks, during which submissions coalesce the same way;
// [Runner.SubmitUrgent] is for an output held until its verdict, which
// does not wait for the rest.
//
// A background check must not delay the changes it checks. HAProxyChecker
// runs haproxy at nice 19 (unless [Config.Interactive]: an admission
// review's check, which someone waits on, keeps the caller's priority;
// the lane [LaneWebhook] of a [CheckServer] is interactive), and it is a
// [Pauser]: the controller pauses it
// for the length of each reconciliation, which holds a check that has not
// started and stops a running haproxy's process group (SIGSTOP, then
// SIGCONT), its timeout's clock with it. Measured at 3,000 routes on a
// 2-core machine, a route add's median went from ~20 ms with the check
// competing to ~15 ms paused, against ~13.5 ms with no check at all.
//
// # I/O and concurrency
//
// HAProxyChecker does I/O: it writes and removes scratch directories and
// starts processes. Gate does none. Runner does what its Checker does, on
// the goroutine that calls Run, and starts no goroutine of its own.
// HAProxyChecker, Gate and Runner are safe for concurrent use.
package rendergate
