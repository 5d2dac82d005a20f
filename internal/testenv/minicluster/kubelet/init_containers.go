package kubelet

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// restartBackoff is the least time between a container's start and its
// restart after it exited.
const restartBackoff = time.Second

// advance moves a pod's start forward, as far as it can without waiting:
// the init containers run one at a time, in order; each must exit 0
// before the next starts. One that fails is restarted after
// restartBackoff, unless the pod's restartPolicy is Never, which fails the
// pod (rp.failed). Once every init container succeeded, the containers
// are started, all at once. Init containers run again only when the pod
// is started again (a new pod, or a start that failed). It is called by
// the Run goroutine only; errors are start errors of a process.
func (rp *runningPod) advance(now func() time.Time) error {
	for rp.nextInit < len(rp.inits) {
		c := rp.inits[rp.nextInit]
		v := c.view()
		switch {
		case v.startedAt.IsZero():
			if err := c.start(rp.net.ns, now); err != nil {
				return err
			}
			continue // a placeholder has succeeded already
		case !v.exited:
			return nil
		case v.exitCode == 0:
			rp.nextInit++
			continue
		case rp.policy == corev1.RestartPolicyNever:
			rp.failed = true
			return nil
		case now().Sub(v.startedAt) <= restartBackoff:
			return nil
		}
		c.mu.Lock()
		c.restarts++
		c.mu.Unlock()
		if err := c.start(rp.net.ns, now); err != nil {
			return err
		}
	}
	if rp.containersStarted {
		return nil
	}
	for _, c := range rp.containers {
		if err := c.start(rp.net.ns, now); err != nil {
			return err
		}
	}
	rp.containersStarted = true
	return nil
}

// initialized reports whether every init container succeeded.
func (rp *runningPod) initialized() bool { return rp.nextInit == len(rp.inits) }

// restartExited restarts the containers that exited, per the pod's
// restartPolicy (anything but Never restarts), restartBackoff after their
// start. It returns the first start error, after trying every container.
func (rp *runningPod) restartExited(now func() time.Time) error {
	if !rp.containersStarted || rp.policy == corev1.RestartPolicyNever {
		return nil
	}
	var first error
	for _, c := range rp.containers {
		v := c.view()
		if !v.exited || now().Sub(v.startedAt) <= restartBackoff {
			continue
		}
		c.mu.Lock()
		c.restarts++
		c.mu.Unlock()
		if err := c.start(rp.net.ns, now); err != nil && first == nil {
			first = fmt.Errorf("restart: %w", err)
		}
	}
	return first
}
