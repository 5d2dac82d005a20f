package kubelet

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func condition(st corev1.PodStatus, t corev1.PodConditionType) corev1.PodCondition {
	for _, c := range st.Conditions {
		if c.Type == t {
			return c
		}
	}
	return corev1.PodCondition{}
}

func TestPodStatusIsReadyOnlyWhenEveryContainerIs(t *testing.T) {
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	v := podView{ip: "198.18.0.2", started: start, initialized: true,
		containers: []containerView{{name: "a", ready: true, pid: 10, startedAt: start}, {name: "b", ready: false, pid: 11, startedAt: start}}}
	st := podStatus(corev1.PodStatus{}, v)
	if st.Phase != corev1.PodRunning || st.PodIP != "198.18.0.2" || st.PodIPs[0].IP != "198.18.0.2" {
		t.Fatalf("phase/ip = %s %s %v", st.Phase, st.PodIP, st.PodIPs)
	}
	if c := condition(st, corev1.PodReady); c.Status != corev1.ConditionFalse {
		t.Fatalf("Ready = %s with one container not ready", c.Status)
	}
	v.containers[1].ready = true
	st2 := podStatus(st, v)
	if c := condition(st2, corev1.PodReady); c.Status != corev1.ConditionTrue {
		t.Fatalf("Ready = %s with all containers ready", c.Status)
	}
	if statusKey(st) == statusKey(st2) {
		t.Fatal("status keys equal although readiness changed")
	}
	if cs := st2.ContainerStatuses[0]; cs.ContainerID != "process://10" || cs.State.Running == nil || !cs.Ready {
		t.Fatalf("container status = %+v", cs)
	}
}

func TestPodStatusKeepsTransitionTimesOfUnchangedConditions(t *testing.T) {
	old := corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue,
		LastTransitionTime: metav1.NewTime(time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC))}}}
	st := podStatus(old, podView{ip: "198.18.0.2", started: time.Now(), initialized: true,
		containers: []containerView{{name: "a", startedAt: time.Now(), exited: true, exitCode: 2}}})
	if got := condition(st, corev1.PodScheduled).LastTransitionTime.Year(); got != 2020 {
		t.Fatalf("PodScheduled transition year = %d, want 2020 kept", got)
	}
	if term := st.ContainerStatuses[0].State.Terminated; term == nil || term.ExitCode != 2 {
		t.Fatalf("terminated state = %+v", term)
	}
}

func TestPodStatusIsPendingWhileInitContainersRunAndFailedWhenOneFailsForGood(t *testing.T) {
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	v := podView{ip: "198.18.0.2", started: start,
		inits: []containerView{
			{name: "first", pid: 9, startedAt: start, exitedAt: start, exited: true},
			{name: "second", pid: 10, startedAt: start},
		},
		containers: []containerView{{name: "main"}},
	}
	st := podStatus(corev1.PodStatus{}, v)
	if st.Phase != corev1.PodPending || condition(st, corev1.PodInitialized).Status != corev1.ConditionFalse ||
		condition(st, corev1.PodReady).Status != corev1.ConditionFalse {
		t.Fatalf("initializing pod: phase %s, Initialized %s, Ready %s; want Pending, False, False",
			st.Phase, condition(st, corev1.PodInitialized).Status, condition(st, corev1.PodReady).Status)
	}
	if term := st.InitContainerStatuses[0].State.Terminated; term == nil || term.Reason != "Completed" {
		t.Errorf("first init container state = %+v, want Terminated Completed", st.InitContainerStatuses[0].State)
	}
	if st.InitContainerStatuses[1].State.Running == nil {
		t.Errorf("second init container state = %+v, want Running", st.InitContainerStatuses[1].State)
	}
	if w := st.ContainerStatuses[0].State.Waiting; w == nil || w.Reason != "PodInitializing" || st.ContainerStatuses[0].ContainerID != "" {
		t.Errorf("main container status = %+v, want Waiting PodInitializing without an ID", st.ContainerStatuses[0])
	}

	v.inits[1].exited, v.inits[1].exitCode, v.failed = true, 3, true
	failed := podStatus(st, v)
	if failed.Phase != corev1.PodFailed {
		t.Errorf("phase = %s after an init container failed under restartPolicy Never, want Failed", failed.Phase)
	}
	if term := failed.InitContainerStatuses[1].State.Terminated; term == nil || term.Reason != "Error" || term.ExitCode != 3 {
		t.Errorf("failed init container state = %+v, want Terminated Error 3", failed.InitContainerStatuses[1].State)
	}
	if statusKey(st) == statusKey(failed) {
		t.Error("status keys equal although an init container exited")
	}

	v.inits[1].exitCode, v.failed, v.initialized = 0, false, true
	v.containers[0] = containerView{name: "main", pid: 11, startedAt: start, ready: true}
	running := podStatus(failed, v)
	if running.Phase != corev1.PodRunning || condition(running, corev1.PodInitialized).Status != corev1.ConditionTrue ||
		condition(running, corev1.PodReady).Status != corev1.ConditionTrue {
		t.Errorf("initialized pod: phase %s, Initialized %s, Ready %s; want Running, True, True",
			running.Phase, condition(running, corev1.PodInitialized).Status, condition(running, corev1.PodReady).Status)
	}
}
