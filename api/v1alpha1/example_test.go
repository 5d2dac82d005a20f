package v1alpha1_test

import (
	"fmt"

	v1alpha1 "github.com/haptic-io/haptic/api/v1alpha1"
)

// A config file is a spec: the template part goes through the file's
// parser, and the Kubernetes-only fields come with their defaults.
func ExampleHAProxyTemplateConfigSpec_TemplatingConfig() {
	spec, err := v1alpha1.SpecFromYAML([]byte(`
watchedResources:
  services:
    apiVersion: v1
    resource: services
    indexBy: ["metadata.namespace", "metadata.name"]
    namespace: shop
extraContext: {ingressClass: haptic}
podSelector: {matchLabels: {app: haproxy}}
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	cfg, err := spec.TemplatingConfig()
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("libraries:", spec.LibraryNames())
	fmt.Println("watch:", cfg.WatchedResources["services"].Resource, "in", spec.WatchedResources["services"].Namespace)
	fmt.Println("extraContext:", cfg.ExtraContext)
	fmt.Println("syncTimeout:", spec.Dataplane.WithDefaults().SyncTimeout.Duration)
	fmt.Println("agent port:", spec.Agent.WithDefaults().Port)
	// Output:
	// libraries: [base ingress]
	// watch: services in shop
	// extraContext: map[ingressClass:haptic]
	// syncTimeout: 2m0s
	// agent port: 5555
}
