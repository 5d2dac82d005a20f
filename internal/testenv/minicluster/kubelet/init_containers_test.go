package kubelet

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// fakeClock is a settable clock.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

// placeholderPod has init containers and containers without binaries:
// starting one runs nothing (an init container succeeds at once).
func placeholderPod(policy corev1.RestartPolicy, inits, containers int) *runningPod {
	rp := &runningPod{policy: policy, net: podNet{ns: "unused"}}
	for range inits {
		rp.inits = append(rp.inits, &container{name: "init", init: true})
	}
	for range containers {
		rp.containers = append(rp.containers, &container{name: "main"})
	}
	return rp
}

func TestAdvanceRunsInitContainersInOrderThenStartsTheContainers(t *testing.T) {
	clk := &fakeClock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	rp := placeholderPod(corev1.RestartPolicyAlways, 2, 2)
	// The second init container is still running: nothing after it starts.
	rp.inits[1].binary, rp.inits[1].startedAt = "/bin/running", clk.t
	if err := rp.advance(clk.now); err != nil {
		t.Fatal(err)
	}
	if rp.nextInit != 1 || rp.initialized() || rp.containersStarted || !rp.containers[0].view().startedAt.IsZero() {
		t.Fatalf("with init 1 running: nextInit %d, initialized %v, containers started %v; want 1, false, false",
			rp.nextInit, rp.initialized(), rp.containersStarted)
	}
	if v := rp.inits[0].view(); !v.exited || v.exitCode != 0 {
		t.Fatalf("init 0 = %+v, want exited 0", v)
	}
	// It exits 0: the containers start.
	rp.inits[1].exited, rp.inits[1].exitCode = true, 0
	if err := rp.advance(clk.now); err != nil {
		t.Fatal(err)
	}
	if !rp.initialized() || !rp.containersStarted {
		t.Fatalf("initialized %v, containers started %v; want both", rp.initialized(), rp.containersStarted)
	}
	for i, c := range rp.containers {
		if v := c.view(); v.startedAt.IsZero() || v.exited {
			t.Errorf("container %d = %+v, want started and running", i, v)
		}
	}
}

func TestAdvanceRestartsAFailedInitContainerAfterTheBackoffOrFailsThePod(t *testing.T) {
	for _, policy := range []corev1.RestartPolicy{corev1.RestartPolicyAlways, corev1.RestartPolicyOnFailure, corev1.RestartPolicyNever} {
		t.Run(string(policy), func(t *testing.T) {
			clk := &fakeClock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
			rp := placeholderPod(policy, 1, 1)
			c := rp.inits[0]
			c.startedAt, c.exited, c.exitCode = clk.t, true, 1
			if err := rp.advance(clk.now); err != nil {
				t.Fatal(err)
			}
			if policy == corev1.RestartPolicyNever {
				if !rp.failed || rp.containersStarted {
					t.Fatalf("failed %v, containers started %v; want the pod failed, nothing started", rp.failed, rp.containersStarted)
				}
				return
			}
			if rp.failed || c.view().restarts != 0 || rp.containersStarted {
				t.Fatalf("inside the backoff: failed %v, restarts %d, containers started %v; want nothing done", rp.failed, c.view().restarts, rp.containersStarted)
			}
			clk.t = clk.t.Add(2 * restartBackoff)
			if err := rp.advance(clk.now); err != nil {
				t.Fatal(err)
			}
			// The placeholder succeeds on its restart, so the containers start.
			if v := c.view(); v.restarts != 1 || v.exitCode != 0 || !rp.containersStarted {
				t.Fatalf("after the backoff: init %+v, containers started %v; want one restart, exit 0, containers started", v, rp.containersStarted)
			}
		})
	}
}
