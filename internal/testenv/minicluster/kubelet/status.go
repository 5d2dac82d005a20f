package kubelet

import (
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// containerView is a snapshot of a container's state for status building.
type containerView struct {
	name, image string
	pid         int
	startedAt   time.Time // zero: not started yet
	exitedAt    time.Time
	exited      bool
	exitCode    int
	restarts    int32
	ready       bool
}

func (c *container) view() containerView {
	c.mu.Lock()
	defer c.mu.Unlock()
	v := containerView{name: c.name, image: c.image, startedAt: c.startedAt, exitedAt: c.exitedAt, exited: c.exited,
		exitCode: c.exitCode, restarts: c.restarts, ready: c.ready}
	if c.cmd != nil {
		v.pid = c.cmd.Process.Pid
	}
	return v
}

// podView is a snapshot of a running pod for status building.
type podView struct {
	ip      string
	started time.Time
	inits   []containerView
	// containers are not started until initialized.
	containers  []containerView
	initialized bool // every init container succeeded (or there is none)
	failed      bool // an init container failed under restartPolicy Never
}

// view takes the snapshot; Run goroutine only.
func (rp *runningPod) view() podView {
	v := podView{ip: rp.net.ip.String(), started: rp.started, initialized: rp.initialized(), failed: rp.failed}
	for _, c := range rp.inits {
		v.inits = append(v.inits, c.view())
	}
	for _, c := range rp.containers {
		v.containers = append(v.containers, c.view())
	}
	return v
}

// podStatus computes a pod's status from a view of it: Pending while init
// containers run, Failed when one failed for good, else Running; Ready
// when initialized and every container is ready. Timestamps of unchanged
// conditions are kept from old. It does no I/O.
func podStatus(old corev1.PodStatus, v podView) corev1.PodStatus {
	st := corev1.PodStatus{
		Phase:     corev1.PodRunning,
		HostIP:    "127.0.0.1",
		HostIPs:   []corev1.HostIP{{IP: "127.0.0.1"}},
		PodIP:     v.ip,
		PodIPs:    []corev1.PodIP{{IP: v.ip}},
		StartTime: ptr(metav1.NewTime(v.started.Truncate(time.Second))),
		QOSClass:  old.QOSClass,
	}
	switch {
	case v.failed:
		st.Phase = corev1.PodFailed
	case !v.initialized:
		st.Phase = corev1.PodPending
	}
	for _, c := range v.inits {
		st.InitContainerStatuses = append(st.InitContainerStatuses, containerStatus(c))
	}
	allReady := len(v.containers) > 0 && v.initialized && !v.failed
	for _, c := range v.containers {
		allReady = allReady && c.ready
		st.ContainerStatuses = append(st.ContainerStatuses, containerStatus(c))
	}
	ready, initialized := corev1.ConditionFalse, corev1.ConditionFalse
	if allReady {
		ready = corev1.ConditionTrue
	}
	if v.initialized {
		initialized = corev1.ConditionTrue
	}
	for _, c := range []struct {
		t corev1.PodConditionType
		s corev1.ConditionStatus
	}{
		{corev1.PodReadyToStartContainers, corev1.ConditionTrue},
		{corev1.PodInitialized, initialized},
		{corev1.ContainersReady, ready},
		{corev1.PodReady, ready},
		{corev1.PodScheduled, corev1.ConditionTrue},
	} {
		cond := corev1.PodCondition{Type: c.t, Status: c.s, LastTransitionTime: metav1.NewTime(time.Now().Truncate(time.Second))}
		for _, o := range old.Conditions {
			if o.Type == c.t && o.Status == c.s {
				cond.LastTransitionTime = o.LastTransitionTime
			}
		}
		st.Conditions = append(st.Conditions, cond)
	}
	return st
}

// containerStatus is one container's status, as the kubelet reports it
// (an exit is "Completed" or "Error").
func containerStatus(v containerView) corev1.ContainerStatus {
	cs := corev1.ContainerStatus{
		Name: v.name, Image: v.image, ImageID: v.image, Ready: v.ready, RestartCount: v.restarts,
		Started: ptr(false),
	}
	if v.pid != 0 {
		cs.ContainerID = "process://" + strconv.Itoa(v.pid)
	}
	switch {
	case v.startedAt.IsZero():
		cs.State.Waiting = &corev1.ContainerStateWaiting{Reason: "PodInitializing"}
	case v.exited:
		reason := "Error"
		if v.exitCode == 0 {
			reason = "Completed"
		}
		cs.State.Terminated = &corev1.ContainerStateTerminated{ExitCode: int32(v.exitCode), Reason: reason,
			StartedAt:  metav1.NewTime(v.startedAt.Truncate(time.Second)),
			FinishedAt: metav1.NewTime(v.exitedAt.Truncate(time.Second))}
	default:
		cs.State.Running = &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(v.startedAt.Truncate(time.Second))}
		cs.Started = ptr(true)
	}
	return cs
}

// statusKey summarises what a status write would change, to skip no-op
// writes.
func statusKey(st corev1.PodStatus) string {
	k := string(st.Phase) + "|" + st.PodIP
	for _, c := range st.Conditions {
		k += "|" + string(c.Type) + "=" + string(c.Status)
	}
	for _, c := range st.ContainerStatuses {
		k += "|" + c.Name + ":" + c.ContainerID + ":" + strconv.FormatBool(c.Ready) + ":" + strconv.Itoa(int(c.RestartCount))
		if c.State.Terminated != nil {
			k += ":exited"
		}
	}
	for _, c := range st.InitContainerStatuses {
		k += "|init:" + c.Name + ":" + c.ContainerID + ":" + strconv.Itoa(int(c.RestartCount))
		if t := c.State.Terminated; t != nil {
			k += ":exited=" + strconv.Itoa(int(t.ExitCode))
		}
	}
	return k
}

func ptr[T any](v T) *T { return &v }
