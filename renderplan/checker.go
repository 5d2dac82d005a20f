package renderplan

import "context"

// Checker validates one rendered output as HAProxy would load it: the
// haproxy_valid assertion of the template tests and the controller's
// validation gate call one. It returns nil when the output passes, a
// refusal when HAProxy would not load the tree and any other error when
// the check itself could not run; rendergate's HAProxyChecker, the real
// one, refuses with a *rendergate.CheckError, and rendergate.VerdictOf
// tells the three apart. Implementations must be safe for concurrent use.
//
// This package declares the interface beside the type it checks and
// implements none: checking runs programs, which this package does not.
type Checker interface {
	Check(ctx context.Context, out *Output) error
}

// CheckerFunc adapts a function to a [Checker].
type CheckerFunc func(ctx context.Context, out *Output) error

// Check calls f(ctx, out).
func (f CheckerFunc) Check(ctx context.Context, out *Output) error { return f(ctx, out) }

var _ Checker = CheckerFunc(nil)
