//go:build tools

// Package tools pins etcd, built by hack/build-minicluster.sh. The main
// package of go.etcd.io/etcd/server/v3 is the module root.
package tools

import _ "go.etcd.io/etcd/server/v3"
