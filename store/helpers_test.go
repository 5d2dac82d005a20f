package store_test

import "github.com/haptic-io/haptic/store"

// testResources watches what the stock libraries read.
var testResources = map[string]store.WatchedResource{
	"ingresses": {APIVersion: "networking.k8s.io/v1", Resource: "ingresses", IndexBy: []string{"metadata.namespace", "metadata.name"}},
	"services":  {APIVersion: "v1", Resource: "services", IndexBy: []string{"metadata.namespace", "metadata.name"}},
	"endpoints": {APIVersion: "discovery.k8s.io/v1", Resource: "endpointslices", IndexBy: []string{"metadata.namespace", `metadata.labels["kubernetes.io/service-name"]`}},
	"secrets":   {APIVersion: "v1", Resource: "secrets", IndexBy: []string{"metadata.namespace", "metadata.name"}},
}
