package kubelet

import (
	"context"
	"fmt"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
)

// registerNode creates (or refreshes) the Node with a Ready status whose
// InternalIP is 127.0.0.1 and kubelet port is the logs server's.
func (k *Kubelet) registerNode(ctx context.Context) error {
	// The node controller writes the Node too (taints, annotations): a
	// conflict only means our copy is stale, so read it again and retry.
	return retry.RetryOnConflict(retry.DefaultBackoff, func() error { return k.putNode(ctx) })
}

// putNode creates the Node if needed and writes its Ready status once.
func (k *Kubelet) putNode(ctx context.Context) error {
	nodes := k.cfg.Client.CoreV1().Nodes()
	node, err := nodes.Get(ctx, k.cfg.NodeName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		node, err = nodes.Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{
			Name:   k.cfg.NodeName,
			Labels: map[string]string{"kubernetes.io/hostname": k.cfg.NodeName, "kubernetes.io/os": "linux"},
		}}, metav1.CreateOptions{})
	}
	if err != nil {
		return fmt.Errorf("register node %s: %w", k.cfg.NodeName, err)
	}
	now := metav1.NewTime(k.cfg.Now())
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("64"),
		corev1.ResourceMemory: resource.MustParse("256Gi"),
		corev1.ResourcePods:   resource.MustParse("1000"),
	}
	node.Status = corev1.NodeStatus{
		Capacity:    capacity,
		Allocatable: capacity,
		Phase:       corev1.NodeRunning,
		Conditions: []corev1.NodeCondition{{
			Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
			Message: "process kubelet is posting ready status", LastHeartbeatTime: now, LastTransitionTime: now,
		}},
		Addresses: []corev1.NodeAddress{
			{Type: corev1.NodeInternalIP, Address: "127.0.0.1"},
			{Type: corev1.NodeHostName, Address: k.cfg.NodeName},
		},
		DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: int32(k.logsPort)}},
		NodeInfo: corev1.NodeSystemInfo{
			KubeletVersion: "v1.37.2-process", OperatingSystem: "linux", Architecture: "amd64",
			ContainerRuntimeVersion: "process://1",
		},
	}
	if _, err := nodes.UpdateStatus(ctx, node, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("register node %s: status: %w", k.cfg.NodeName, err)
	}
	return nil
}

// renewLease creates or renews the node's Lease in kube-node-lease; without
// it the node lifecycle controller marks the node Unknown after ~40-60 s and
// every endpoint not ready.
func (k *Kubelet) renewLease(ctx context.Context) error {
	leases := k.cfg.Client.CoordinationV1().Leases(corev1.NamespaceNodeLease)
	now := metav1.NewMicroTime(k.cfg.Now())
	dur := int32(40)
	l, err := leases.Get(ctx, k.cfg.NodeName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		holder := k.cfg.NodeName
		_, err = leases.Create(ctx, &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Name: k.cfg.NodeName, Namespace: corev1.NamespaceNodeLease},
			Spec:       coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &dur, RenewTime: &now},
		}, metav1.CreateOptions{})
	} else if err == nil {
		l.Spec.RenewTime = &now
		l.Spec.LeaseDurationSeconds = &dur
		_, err = leases.Update(ctx, l, metav1.UpdateOptions{})
	}
	if err != nil {
		return fmt.Errorf("renew lease of node %s: %w", k.cfg.NodeName, err)
	}
	return nil
}

// leaseLoop renews the Lease every LeaseInterval until ctx ends.
func (k *Kubelet) leaseLoop(ctx context.Context) {
	t := time.NewTicker(k.cfg.LeaseInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := k.renewLease(ctx); err != nil && ctx.Err() == nil {
				k.cfg.Log.Warn("lease renewal failed", "err", err)
			}
		}
	}
}
