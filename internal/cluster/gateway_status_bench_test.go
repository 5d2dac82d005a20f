package cluster

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/haptic-io/haptic/gatewayapi"
	"github.com/haptic-io/haptic/store"
)

// BenchmarkStatusPublishSteady is the manager's status round at n
// HTTPRoutes when every status is already written: Model.Statuses and
// the writer's comparison of each with the object's, which writes
// nothing. It runs after every change and on every refresh tick.
func BenchmarkStatusPublishSteady(b *testing.B) {
	for _, n := range []int{300, 3000} {
		b.Run(fmt.Sprintf("routes=%d", n), func(b *testing.B) {
			var sb strings.Builder
			sb.WriteString(`apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: haptic, generation: 1}
spec: {controllerName: ours}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {namespace: infra, name: gw, generation: 1}
spec:
  gatewayClassName: haptic
  listeners: [{name: http, port: 80, protocol: HTTP, allowedRoutes: {namespaces: {from: All}}}]
`)
			for i := range n {
				fmt.Fprintf(&sb, `---
apiVersion: v1
kind: Service
metadata: {namespace: apps, name: svc-%d}
spec: {ports: [{port: 8080}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {namespace: apps, name: r-%d, resourceVersion: "1", generation: 1}
spec:
  parentRefs: [{name: gw, namespace: infra}]
  hostnames: [h%d.example.com]
  rules: [{backendRefs: [{name: svc-%d, port: 8080}]}]
`, i, i, i, i)
			}
			objs, err := store.DecodeManifests([]byte(sb.String()))
			if err != nil {
				b.Fatal(err)
			}
			st, err := store.NewMemory(gatewayapi.WatchedResources())
			if err != nil {
				b.Fatal(err)
			}
			if _, err := st.AddObjects(objs...); err != nil {
				b.Fatal(err)
			}
			model := gatewayapi.Build(st.Snapshot(), gatewayapi.Options{ControllerName: "ours", StatusOnly: true, Cache: &gatewayapi.Cache{}})
			fleet := func(gatewayapi.Ref) gatewayapi.Fleet {
				return gatewayapi.Fleet{Addresses: []string{"10.0.0.1"}, ProgrammedGeneration: 1}
			}
			now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
			written := fakeObjects{}
			for _, s := range model.Statuses(fleet) {
				o := map[string]any{"metadata": map[string]any{"namespace": s.Namespace, "name": s.Name}, "status": gatewayapi.WithTransitionTimes(s, nil, now).Status}
				written[kindAlias(s.Kind)+" "+s.Namespace+"/"+s.Name] = o
			}
			w := &apiStatusWriter{controllerName: "ours", now: func() time.Time { return now }}
			b.ReportAllocs()
			for b.Loop() {
				writes, failures := w.write(context.Background(), model.Statuses(fleet), written)
				if writes != 0 || failures != 0 {
					b.Fatalf("%d writes, %d failures: want none", writes, failures)
				}
			}
		})
	}
}
