package store_test

import (
	"testing"

	"github.com/haptic-io/haptic/store"
)

// routeManifest is one route as the propagation benchmark writes it: an
// Ingress, its Service and an EndpointSlice in one file.
const routeManifest = `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {namespace: bench, name: r1, creationTimestamp: "2026-01-01T00:00:00Z"}
spec:
  ingressClassName: haptic
  rules:
    - host: r1.bench.local
      http:
        paths:
          - {path: /, pathType: Prefix, backend: {service: {name: r1, port: {number: 80}}}}
---
apiVersion: v1
kind: Service
metadata: {namespace: bench, name: r1}
spec: {ports: [{port: 80}]}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {namespace: bench, name: r1-a, labels: {kubernetes.io/service-name: r1}}
addressType: IPv4
ports: [{port: 40123}]
endpoints:
  - {addresses: [127.0.0.1], conditions: {ready: true}, targetRef: {kind: Pod, namespace: bench, name: r1-pod}}
`

// BenchmarkDecodeManifestsRoute is what the directory source pays to read
// one route file.
func BenchmarkDecodeManifestsRoute(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := store.DecodeManifests([]byte(routeManifest)); err != nil {
			b.Fatal(err)
		}
	}
}
