//go:build tools

// Package tools pins the Kubernetes control-plane commands built by
// hack/build-minicluster.sh.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
)
