package gatewayapi_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/haptic-io/haptic/gatewayapi"
)

func TestStatusesFollowTheSpecification(t *testing.T) {
	tests := []struct {
		name      string
		manifests string
		fleet     func(gatewayapi.Ref) gatewayapi.Fleet
		want      string
	}{
		{
			name: "a route in the same namespace attaches",
			manifests: `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {namespace: infra, name: gw, generation: 2}
spec:
  gatewayClassName: haptic
  listeners: [{name: http, port: 80, protocol: HTTP, allowedRoutes: {namespaces: {from: Same}}}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {namespace: infra, name: r, generation: 3}
spec:
  parentRefs: [{name: gw}]
  rules: [{backendRefs: [{name: web, port: 8080}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {namespace: apps, name: denied, generation: 1}
spec:
  parentRefs: [{name: gw, namespace: infra}]
  rules: [{backendRefs: [{name: web, port: 8080}]}]
`,
			fleet: programmed,
			want: `Gateway infra/gw: Accepted=True/Accepted Programmed=True/Programmed
Gateway infra/gw listener http: attached=1 kinds=HTTPRoute,GRPCRoute Accepted=True/Accepted Conflicted=False/NoConflicts Programmed=True/Programmed ResolvedRefs=True/ResolvedRefs
GatewayClass haptic: Accepted=True/Accepted
HTTPRoute apps/denied parent gw: Accepted=False/NotAllowedByListeners ResolvedRefs=True/ResolvedRefs
HTTPRoute infra/r parent gw: Accepted=True/Accepted ResolvedRefs=True/ResolvedRefs
`,
		},
		{
			name: "no fleet yet leaves the Gateway and its listeners unprogrammed",
			manifests: `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {namespace: infra, name: gw, generation: 2}
spec:
  gatewayClassName: haptic
  listeners: [{name: http, port: 80, protocol: HTTP}]
`,
			want: `Gateway infra/gw: Accepted=True/Accepted Programmed=False/AddressNotAssigned
Gateway infra/gw listener http: attached=0 kinds=HTTPRoute,GRPCRoute Accepted=True/Accepted Conflicted=False/NoConflicts Programmed=False/Pending ResolvedRefs=True/ResolvedRefs
GatewayClass haptic: Accepted=True/Accepted
`,
		},
		{
			name: "a Gateway of another class gets no status",
			manifests: `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {namespace: infra, name: theirs}
spec:
  gatewayClassName: other
  listeners: [{name: http, port: 80, protocol: HTTP}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {namespace: infra, name: r}
spec:
  parentRefs: [{name: theirs}]
`,
			want: "GatewayClass haptic: Accepted=True/Accepted\n",
		},
		{
			name: "route kinds and protocols",
			manifests: `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {namespace: infra, name: only-invalid, generation: 1}
spec:
  gatewayClassName: haptic
  listeners: [{name: http, port: 80, protocol: HTTP, allowedRoutes: {kinds: [{kind: InvalidRoute}]}}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {namespace: infra, name: mixed, generation: 1}
spec:
  gatewayClassName: haptic
  listeners: [{name: http, port: 80, protocol: HTTP, allowedRoutes: {kinds: [{kind: InvalidRoute}, {kind: HTTPRoute}]}}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {namespace: infra, name: udp, generation: 1}
spec:
  gatewayClassName: haptic
  listeners: [{name: invalid, port: 80, protocol: UDP}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {namespace: infra, name: some-udp, generation: 1}
spec:
  gatewayClassName: haptic
  listeners: [{name: http, port: 80, protocol: HTTP}, {name: invalid, port: 81, protocol: UDP}]
`,
			fleet: programmed,
			want: `Gateway infra/mixed: Accepted=True/Accepted Programmed=True/Programmed
Gateway infra/mixed listener http: attached=0 kinds=HTTPRoute Accepted=True/Accepted Conflicted=False/NoConflicts Programmed=True/Programmed ResolvedRefs=False/InvalidRouteKinds
Gateway infra/only-invalid: Accepted=True/Accepted Programmed=True/Programmed
Gateway infra/only-invalid listener http: attached=0 kinds= Accepted=True/Accepted Conflicted=False/NoConflicts Programmed=True/Programmed ResolvedRefs=False/InvalidRouteKinds
Gateway infra/some-udp: Accepted=True/ListenersNotValid Programmed=True/Programmed
Gateway infra/some-udp listener http: attached=0 kinds=HTTPRoute,GRPCRoute Accepted=True/Accepted Conflicted=False/NoConflicts Programmed=True/Programmed ResolvedRefs=True/ResolvedRefs
Gateway infra/some-udp listener invalid: attached=0 kinds= Accepted=False/UnsupportedProtocol Conflicted=False/NoConflicts Programmed=False/Invalid ResolvedRefs=True/ResolvedRefs
Gateway infra/udp: Accepted=False/ListenersNotValid Programmed=False/Invalid
Gateway infra/udp listener invalid: attached=0 kinds= Accepted=False/UnsupportedProtocol Conflicted=False/NoConflicts Programmed=False/Invalid ResolvedRefs=True/ResolvedRefs
GatewayClass haptic: Accepted=True/Accepted
`,
		},
		{
			name: "parentRef sectionName, port, hostnames and namespace selectors",
			manifests: `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {namespace: infra, name: gw, generation: 1}
spec:
  gatewayClassName: haptic
  listeners:
  - {name: http, port: 80, protocol: HTTP, hostname: foo.example.com, allowedRoutes: {namespaces: {from: All}}}
  - {name: sel, port: 8080, protocol: HTTP, allowedRoutes: {namespaces: {from: Selector, selector: {matchLabels: {gateway-conformance: backend}}}}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {namespace: infra, name: bad-section}
spec:
  parentRefs: [{name: gw, sectionName: nope}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {namespace: infra, name: bad-port}
spec:
  parentRefs: [{name: gw, port: 81}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {namespace: infra, name: bad-host}
spec:
  parentRefs: [{name: gw, sectionName: http}]
  hostnames: [bar.example.com]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {namespace: infra, name: wild-host}
spec:
  parentRefs: [{name: gw, sectionName: http}]
  hostnames: ["*.example.com"]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {namespace: apps, name: selected}
spec:
  parentRefs: [{name: gw, namespace: infra, port: 8080}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {namespace: other, name: not-selected}
spec:
  parentRefs: [{name: gw, namespace: infra, sectionName: sel}]
`,
			fleet: programmed,
			want: `Gateway infra/gw: Accepted=True/Accepted Programmed=True/Programmed
Gateway infra/gw listener http: attached=1 kinds=HTTPRoute,GRPCRoute Accepted=True/Accepted Conflicted=False/NoConflicts Programmed=True/Programmed ResolvedRefs=True/ResolvedRefs
Gateway infra/gw listener sel: attached=1 kinds=HTTPRoute,GRPCRoute Accepted=True/Accepted Conflicted=False/NoConflicts Programmed=True/Programmed ResolvedRefs=True/ResolvedRefs
GatewayClass haptic: Accepted=True/Accepted
HTTPRoute apps/selected parent gw:8080: Accepted=True/Accepted ResolvedRefs=True/ResolvedRefs
HTTPRoute infra/bad-host parent gw/http: Accepted=False/NoMatchingListenerHostname ResolvedRefs=True/ResolvedRefs
HTTPRoute infra/bad-port parent gw:81: Accepted=False/NoMatchingParent ResolvedRefs=True/ResolvedRefs
HTTPRoute infra/bad-section parent gw/nope: Accepted=False/NoMatchingParent ResolvedRefs=True/ResolvedRefs
HTTPRoute infra/wild-host parent gw/http: Accepted=True/Accepted ResolvedRefs=True/ResolvedRefs
HTTPRoute other/not-selected parent gw/sel: Accepted=False/NotAllowedByListeners ResolvedRefs=True/ResolvedRefs
`,
		},
		{
			name: "backend references",
			manifests: `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {namespace: infra, name: gw, generation: 1}
spec:
  gatewayClassName: haptic
  listeners: [{name: http, port: 80, protocol: HTTP}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {namespace: infra, name: missing}
spec:
  parentRefs: [{name: gw}]
  rules: [{backendRefs: [{name: nope, port: 8080}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {namespace: infra, name: kind}
spec:
  parentRefs: [{name: gw}]
  rules: [{backendRefs: [{group: example.com, kind: Bucket, name: b}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {namespace: infra, name: cross}
spec:
  parentRefs: [{name: gw}]
  rules: [{backendRefs: [{name: web, namespace: apps, port: 8080}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {namespace: infra, name: granted}
spec:
  parentRefs: [{name: gw}]
  rules: [{backendRefs: [{name: web, namespace: other, port: 8080}]}]
---
apiVersion: v1
kind: Service
metadata: {namespace: other, name: web}
spec: {ports: [{port: 8080}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: ReferenceGrant
metadata: {namespace: other, name: g}
spec:
  from: [{group: gateway.networking.k8s.io, kind: HTTPRoute, namespace: infra}]
  to: [{group: "", kind: Service}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: ReferenceGrant
metadata: {namespace: apps, name: wrong-name}
spec:
  from: [{group: gateway.networking.k8s.io, kind: HTTPRoute, namespace: infra}]
  to: [{group: "", kind: Service, name: not-web}]
`,
			fleet: programmed,
			want: `Gateway infra/gw: Accepted=True/Accepted Programmed=True/Programmed
Gateway infra/gw listener http: attached=4 kinds=HTTPRoute,GRPCRoute Accepted=True/Accepted Conflicted=False/NoConflicts Programmed=True/Programmed ResolvedRefs=True/ResolvedRefs
GatewayClass haptic: Accepted=True/Accepted
HTTPRoute infra/cross parent gw: Accepted=True/Accepted ResolvedRefs=False/RefNotPermitted
HTTPRoute infra/granted parent gw: Accepted=True/Accepted ResolvedRefs=True/ResolvedRefs
HTTPRoute infra/kind parent gw: Accepted=True/Accepted ResolvedRefs=False/InvalidKind
HTTPRoute infra/missing parent gw: Accepted=True/Accepted ResolvedRefs=False/BackendNotFound
`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := summary(build(t, tt.manifests).Statuses(tt.fleet))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("statuses (-want +got):\n%s", diff)
			}
		})
	}
}
