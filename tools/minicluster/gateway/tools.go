//go:build tools

// Package tools pins echo-basic, built by hack/build-minicluster.sh.
package tools

import _ "sigs.k8s.io/gateway-api/conformance/echo-basic"
