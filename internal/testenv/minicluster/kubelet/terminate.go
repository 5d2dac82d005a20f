package kubelet

import (
	"context"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// minTermGrace is the time a container gets between SIGTERM and SIGKILL
// when its preStop hook used up the grace period (the real kubelet gives
// the same two seconds).
const minTermGrace = 2 * time.Second

// termination is the graceful stop of one pod, run by its own goroutine
// (see [Kubelet.startTermination]); done closes once every container has
// exited.
type termination struct {
	done chan struct{}
}

// startTermination stops rp as the real kubelet stops a pod that is being
// deleted: each container runs its preStop hook, then gets SIGTERM, and
// SIGKILL once the pod's grace period (deletionGracePeriodSeconds, else
// terminationGracePeriodSeconds, else 30 s) is over, at least
// [minTermGrace] after its SIGTERM. The pod's status and endpoints are
// left alone meanwhile, so the EndpointSlice controller lists the pod as
// serving and terminating until it is deleted. Only the preStop "sleep"
// action runs; exec and httpGet hooks are logged and skipped (there is no
// image to exec into). ctx ending (the kubelet stopping) cuts the hooks
// short. The goroutine is counted in wg.
func (k *Kubelet) startTermination(ctx context.Context, wg *sync.WaitGroup, pod *corev1.Pod, rp *runningPod) *termination {
	grace := 30 * time.Second
	switch {
	case pod.DeletionGracePeriodSeconds != nil:
		grace = time.Duration(*pod.DeletionGracePeriodSeconds) * time.Second
	case pod.Spec.TerminationGracePeriodSeconds != nil:
		grace = time.Duration(*pod.Spec.TerminationGracePeriodSeconds) * time.Second
	}
	hooks := map[string]*corev1.LifecycleHandler{}
	for _, c := range pod.Spec.Containers {
		if c.Lifecycle != nil && c.Lifecycle.PreStop != nil {
			hooks[c.Name] = c.Lifecycle.PreStop
		}
	}
	log := k.cfg.Log.With("pod", pod.Namespace+"/"+pod.Name)
	term := &termination{done: make(chan struct{})}
	deadline := k.cfg.Now().Add(grace)
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(term.done)
		var cwg sync.WaitGroup
		for _, c := range rp.containers {
			cwg.Go(func() {
				if h := hooks[c.name]; h != nil {
					runPreStop(ctx, h, deadline, func(msg string) { log.Warn(msg, "container", c.name) })
				}
				c.stop(max(time.Until(deadline), minTermGrace))
			})
		}
		cwg.Wait()
		for _, c := range rp.inits {
			c.stop(minTermGrace)
		}
		log.Debug("pod terminated", "grace", grace)
	}()
	return term
}

// runPreStop runs one preStop hook, ending at deadline or when ctx ends.
func runPreStop(ctx context.Context, h *corev1.LifecycleHandler, deadline time.Time, warn func(string)) {
	switch {
	case h.Sleep != nil:
		d := min(time.Duration(h.Sleep.Seconds)*time.Second, time.Until(deadline))
		if d <= 0 {
			return
		}
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
		}
	case h.Exec != nil:
		warn("preStop exec hook skipped: a process pod has no image to exec into")
	case h.HTTPGet != nil:
		warn("preStop httpGet hook skipped: not supported by the process kubelet")
	}
}
