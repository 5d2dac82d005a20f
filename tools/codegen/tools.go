//go:build tools

// Package tools pins controller-gen, built by hack/generate-crds.sh into
// .cache/bin. The product module never imports it.
package tools

import _ "sigs.k8s.io/controller-tools/cmd/controller-gen"
