package e2e_test

import (
	"context"
	"testing"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// routeKind is the object that carries one route in the route
// benchmarks (probe, routechange, scale): an Ingress here; an HTTPRoute
// attached to a Gateway is another kind with the same three functions.
type routeKind struct {
	// name is the kind in metric and picture names ("ingress").
	name string
	// start, when set, starts the benchmark's product in place of
	// startRouteBench's Ingress setup (gateway mode: a Gateway and its
	// fleet).
	start func(b *testing.B, kind routeKind, backends ...string) *routeBench
	// prepare readies the cluster for routes of this kind (a Gateway,
	// say), once; nil needs nothing.
	prepare func(ctx context.Context, e *controllerEnv) error
	// create creates route name in ns sending host's traffic to Service
	// svc, port 80.
	create func(ctx context.Context, cs kubernetes.Interface, ns, name, host, svc string) error
	// setBackend points route name in ns (for host) at Service svc.
	setBackend func(ctx context.Context, cs kubernetes.Interface, ns, name, host, svc string) error
}

// ingressKind routes with networking.k8s.io/v1 Ingresses of class
// haptic, one host and one Prefix "/" path each.
var ingressKind = routeKind{
	name: "ingress",
	create: func(ctx context.Context, cs kubernetes.Interface, ns, name, host, svc string) error {
		ing := echoIngress(ns, host, svc)
		ing.Name = name
		_, err := cs.NetworkingV1().Ingresses(ns).Create(ctx, ing, metav1.CreateOptions{})
		return err
	},
	setBackend: func(ctx context.Context, cs kubernetes.Interface, ns, name, host, svc string) error {
		ing, err := cs.NetworkingV1().Ingresses(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		ing.Spec.Rules[0].HTTP.Paths[0].Backend = networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{
			Name: svc, Port: networkingv1.ServiceBackendPort{Number: 80},
		}}
		_, err = cs.NetworkingV1().Ingresses(ns).Update(ctx, ing, metav1.UpdateOptions{})
		return err
	},
}
