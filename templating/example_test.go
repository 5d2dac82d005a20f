package templating_test

import (
	"context"
	"fmt"

	"github.com/haptic-io/haptic/store"
	"github.com/haptic-io/haptic/templating"
)

// A config is compiled once, objects go into a store, and each render
// gives the files and the plan.
func Example() {
	cfg, err := templating.ParseConfig([]byte(`
watchedResources:
  services:  {apiVersion: v1, resource: services, indexBy: ["metadata.namespace", "metadata.name"]}
  endpoints: {apiVersion: discovery.k8s.io/v1, resource: endpointslices,
              indexBy: ["metadata.namespace", "metadata.labels[\"kubernetes.io/service-name\"]"]}
haproxyConfig:
  template: |
    defaults base
        mode http
    frontend fe from base
        bind :8080
        use_backend %[req.hdr(host),lower,map({{ registerMap (dict "name" "hosts.map") }})]
    {{- range .resources.services.List }}
    {{- mapEntry "hosts.map" (printf "%s.example.com" .metadata.name) (printf "be_%s" .metadata.name) }}
    {{ backend (dict "name" (printf "be_%s" .metadata.name) "balance" "roundrobin"
        "servers" (backendServers (dict "namespace" .metadata.namespace "service" .metadata.name "port" "http"))) }}
    {{- end }}
`))
	if err != nil {
		panic(err)
	}
	engine, err := templating.Compile(cfg)
	if err != nil {
		panic(err)
	}
	st, _ := store.NewMemory(cfg.WatchedResources)
	objs, _ := store.DecodeManifests([]byte(`
apiVersion: v1
kind: Service
metadata: {name: web, namespace: default}
spec: {ports: [{name: http, port: 80}]}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: web-abc, namespace: default, labels: {kubernetes.io/service-name: web}}
addressType: IPv4
ports: [{name: http, port: 8080}]
endpoints: [{addresses: [10.0.0.7], targetRef: {kind: Pod, name: web-5f7}}]
`))
	if _, err := st.AddObjects(objs...); err != nil {
		panic(err)
	}
	out, problems, err := engine.Render(context.Background(), st.Snapshot(), templating.RenderOptions{})
	if err != nil {
		panic(err)
	}
	for _, f := range out.Files {
		fmt.Printf("--- %s\n%s", f.Path, f.Body)
	}
	fmt.Println("problems:", len(problems))
	// Output:
	// --- haproxy.cfg
	// defaults base
	//     mode http
	// frontend fe from base
	//     bind :8080
	//     use_backend %[req.hdr(host),lower,map(maps/hosts.map)]
	// defaults haptic-be-2bb40f29ca7d
	//     mode http
	//     balance roundrobin
	//
	// backend be_web from haptic-be-2bb40f29ca7d
	//     guid haptic:be:be_web
	//     server web-5f7 10.0.0.7:8080 weight 1
	//
	// --- maps/hosts.map
	// web.example.com be_web
	// problems: 0
}
