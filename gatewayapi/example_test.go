package gatewayapi_test

import (
	"fmt"

	"github.com/haptic-io/haptic/gatewayapi"
	"github.com/haptic-io/haptic/store"
)

// Example builds the model of one Gateway with one HTTPRoute, as the
// controller's render loop does, and prints its statuses and the map
// entry that routes the route's host.
func Example() {
	objs, err := store.DecodeManifests([]byte(`
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: haptic, generation: 1}
spec: {controllerName: haproxy-haptic.org/gateway-controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {namespace: default, name: web, generation: 1}
spec:
  gatewayClassName: haptic
  listeners: [{name: http, port: 80, protocol: HTTP}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {namespace: default, name: shop, generation: 1}
spec:
  parentRefs: [{name: web}]
  hostnames: [shop.example.com]
  rules: [{backendRefs: [{name: shop, port: 8080}]}]
---
apiVersion: v1
kind: Service
metadata: {namespace: default, name: shop}
spec: {ports: [{port: 8080}]}
`))
	if err != nil {
		panic(err)
	}
	st, _ := store.NewMemory(gatewayapi.WatchedResources())
	if _, err := st.AddObjects(objs...); err != nil {
		panic(err)
	}
	m := gatewayapi.Build(st.Snapshot(), gatewayapi.Options{})
	for _, ref := range m.Gateways() {
		fmt.Println("serve", ref, m.Listeners(ref))
		for _, e := range m.RenderContext(ref)["maps"].(map[string]any)[gatewayapi.MapPathsPrefix].([]any) {
			fmt.Println("map", e.(map[string]any)["key"], e.(map[string]any)["value"])
		}
	}
	fleet := func(gatewayapi.Ref) gatewayapi.Fleet {
		return gatewayapi.Fleet{Addresses: []string{"10.0.0.7"}, ProgrammedGeneration: 1}
	}
	for _, s := range m.Statuses(fleet) {
		fmt.Println(s.Kind, s.Namespace, s.Name)
	}
	// Output:
	// serve default/web [{http 80 HTTP}]
	// map http|shop.example.com/ be_default_shop_8080
	// Gateway default web
	// GatewayClass  haptic
	// HTTPRoute default shop
}
