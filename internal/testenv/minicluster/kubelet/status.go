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
	startedAt   time.Time
	exited      bool
	exitCode    int
	restarts    int32
	ready       bool
}

func (c *container) view() containerView {
	c.mu.Lock()
	defer c.mu.Unlock()
	v := containerView{name: c.name, image: c.image, startedAt: c.startedAt, exited: c.exited,
		exitCode: c.exitCode, restarts: c.restarts, ready: c.ready}
	if c.cmd != nil {
		v.pid = c.cmd.Process.Pid
	}
	return v
}

// podStatus computes a pod's status from its containers' views. Timestamps
// of unchanged conditions are kept from old. It does no I/O.
func podStatus(old corev1.PodStatus, podIP string, started time.Time, views []containerView) corev1.PodStatus {
	allReady := len(views) > 0
	st := corev1.PodStatus{
		Phase:     corev1.PodRunning,
		HostIP:    "127.0.0.1",
		HostIPs:   []corev1.HostIP{{IP: "127.0.0.1"}},
		PodIP:     podIP,
		PodIPs:    []corev1.PodIP{{IP: podIP}},
		StartTime: ptr(metav1.NewTime(started.Truncate(time.Second))),
		QOSClass:  old.QOSClass,
	}
	for _, v := range views {
		cs := corev1.ContainerStatus{
			Name: v.name, Image: v.image, ImageID: v.image, Ready: v.ready, RestartCount: v.restarts,
			ContainerID: "process://" + strconv.Itoa(v.pid),
		}
		if v.exited {
			cs.State.Terminated = &corev1.ContainerStateTerminated{ExitCode: int32(v.exitCode), Reason: "Exited",
				StartedAt: metav1.NewTime(v.startedAt.Truncate(time.Second))}
			cs.Started = ptr(false)
		} else {
			cs.State.Running = &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(v.startedAt.Truncate(time.Second))}
			cs.Started = ptr(true)
		}
		allReady = allReady && v.ready
		st.ContainerStatuses = append(st.ContainerStatuses, cs)
	}
	ready := corev1.ConditionFalse
	if allReady {
		ready = corev1.ConditionTrue
	}
	for _, c := range []struct {
		t corev1.PodConditionType
		s corev1.ConditionStatus
	}{
		{corev1.PodReadyToStartContainers, corev1.ConditionTrue},
		{corev1.PodInitialized, corev1.ConditionTrue},
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
	return k
}

func ptr[T any](v T) *T { return &v }
