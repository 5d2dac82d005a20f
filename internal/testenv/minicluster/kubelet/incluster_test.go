package kubelet

import (
	"slices"
	"strings"
	"testing"

	discoveryv1 "k8s.io/api/discovery/v1"
)

func TestPickEndpointPrefersReadyThenServingTerminating(t *testing.T) {
	no := false
	http, other := "http", "other"
	port, otherPort := int32(3000), int32(9)
	slice := func(eps ...discoveryv1.Endpoint) *discoveryv1.EndpointSlice {
		return &discoveryv1.EndpointSlice{AddressType: discoveryv1.AddressTypeIPv4, Endpoints: eps,
			Ports: []discoveryv1.EndpointPort{{Name: &http, Port: &port}, {Name: &other, Port: &otherPort}}}
	}
	ep := func(ip string, ready, serving bool) discoveryv1.Endpoint {
		return discoveryv1.Endpoint{Addresses: []string{ip}, Conditions: discoveryv1.EndpointConditions{Ready: &ready, Serving: &serving, Terminating: &no}}
	}
	both := []*discoveryv1.EndpointSlice{slice(ep("198.18.0.2", false, true), ep("198.18.0.3", true, true))}
	for range 20 {
		if got, err := pickEndpoint(both, "http"); err != nil || got != "198.18.0.3:3000" {
			t.Fatalf("ready and terminating: %q, %v; want the ready one", got, err)
		}
	}
	if got, err := pickEndpoint([]*discoveryv1.EndpointSlice{slice(ep("198.18.0.2", false, true))}, "other"); err != nil || got != "198.18.0.2:9" {
		t.Errorf("terminating only: %q, %v; want it, on the named port", got, err)
	}
	if got, err := pickEndpoint([]*discoveryv1.EndpointSlice{slice(ep("198.18.0.2", false, false))}, "http"); err == nil {
		t.Errorf("neither ready nor serving: %q, want an error", got)
	}
	if got, err := pickEndpoint(both, "missing"); err == nil {
		t.Errorf("unknown port: %q, want an error", got)
	}
}

func TestBindArgvMountsUnderAPrivateRunAndExecsTheBinary(t *testing.T) {
	if got := bindArgv(nil, "/bin/x", []string{"a"}); !slices.Equal(got, []string{"/bin/x", "a"}) {
		t.Errorf("no binds: %q, want the binary itself", got)
	}
	got := bindArgv([]bindMount{{src: "/tmp/p o'd/vol", dst: "/var/run/secrets/kubernetes.io/serviceaccount"}}, "/bin/x", []string{"a", "b"})
	if len(got) != 7 || got[0] != "/bin/sh" || got[1] != "-c" || !slices.Equal(got[3:], []string{"sh", "/bin/x", "a", "b"}) {
		t.Fatalf("argv %q", got)
	}
	for _, want := range []string{"mount -t tmpfs", " /run\n", `mount --bind '/tmp/p o'\''d/vol' '/var/run/secrets/kubernetes.io/serviceaccount'`, `exec "$@"`} {
		if !strings.Contains(got[2], want) {
			t.Errorf("script %q lacks %q", got[2], want)
		}
	}
	for path, want := range map[string]bool{"/var/run/secrets/x": true, "/run/x": true, "/var/lib/haptic": false, "/runner": false, "/var/run/../lib": false} {
		if underRun(path) != want {
			t.Errorf("underRun(%s) = %v", path, !want)
		}
	}
}
