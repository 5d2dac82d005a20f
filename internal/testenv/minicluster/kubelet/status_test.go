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
	views := []containerView{{name: "a", ready: true, pid: 10, startedAt: start}, {name: "b", ready: false, pid: 11, startedAt: start}}
	st := podStatus(corev1.PodStatus{}, "198.18.0.2", start, views)
	if st.Phase != corev1.PodRunning || st.PodIP != "198.18.0.2" || st.PodIPs[0].IP != "198.18.0.2" {
		t.Fatalf("phase/ip = %s %s %v", st.Phase, st.PodIP, st.PodIPs)
	}
	if c := condition(st, corev1.PodReady); c.Status != corev1.ConditionFalse {
		t.Fatalf("Ready = %s with one container not ready", c.Status)
	}
	views[1].ready = true
	st2 := podStatus(st, "198.18.0.2", start, views)
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
	st := podStatus(old, "198.18.0.2", time.Now(), []containerView{{name: "a", exited: true, exitCode: 2}})
	if got := condition(st, corev1.PodScheduled).LastTransitionTime.Year(); got != 2020 {
		t.Fatalf("PodScheduled transition year = %d, want 2020 kept", got)
	}
	if term := st.ContainerStatuses[0].State.Terminated; term == nil || term.ExitCode != 2 {
		t.Fatalf("terminated state = %+v", term)
	}
}
