package kubelet

import (
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
)

func TestImagesLookupPicksTheLongestPrefixAtABoundary(t *testing.T) {
	m := Images{
		"registry.k8s.io/gateway-api/echo-basic": {Binary: "/bin/echo"},
		"registry.k8s.io/gateway-api/":           {Binary: "/bin/any-gateway"},
		"example.com/tool:v2":                    {Binary: "/bin/tool2"},
	}
	tests := map[string]string{
		"registry.k8s.io/gateway-api/echo-basic:v1.5.1":   "/bin/echo",
		"registry.k8s.io/gateway-api/echo-basic@sha256:0": "/bin/echo",
		"registry.k8s.io/gateway-api/echo-advanced:v1":    "/bin/any-gateway",
		"example.com/tool:v2":                             "/bin/tool2",
		"registry.k8s.io/gateway-api/echo-basicX:v1":      "/bin/any-gateway",
	}
	for image, want := range tests {
		got, err := m.lookup(image)
		if err != nil {
			t.Errorf("lookup(%s): %v", image, err)
			continue
		}
		if got.Binary != want {
			t.Errorf("lookup(%s) = %s, want %s", image, got.Binary, want)
		}
	}
	for _, image := range []string{"registry.k8s.io/gateway-apiX/echo:v1", "docker.io/nginx", "example.com/tool:v20"} {
		if _, err := m.lookup(image); err == nil {
			t.Errorf("lookup(%s) matched, want an error", image)
		}
	}
}

func TestConformanceImagesRunEchoBasicAndPlaceholderCoreDNS(t *testing.T) {
	m := ConformanceImages("/x/echo-basic")
	got, err := m.lookup("registry.k8s.io/gateway-api/echo-basic:v1.6.0-dev.3")
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(Image{Binary: "/x/echo-basic", ReadyPorts: []int{3000}}, got); d != "" {
		t.Fatalf("echo-basic (-want +got):\n%s", d)
	}
	if got, err := m.lookup("registry.k8s.io/coredns/coredns:v1.12.2"); err != nil || got.Binary != "" {
		t.Fatalf("coredns = %+v, %v; want the empty placeholder", got, err)
	}
}

func TestHAPTICImagesRunHAProxyAndHaptic(t *testing.T) {
	m := HAPTICImages("/x/haproxy", "/x/haptic")
	for image, want := range map[string]string{
		HAProxyImage + ":3.4":                "/x/haproxy",
		"haproxytech/haproxy-debian:3.4":     "/x/haproxy",
		"docker.io/library/haproxy:3.4":      "/x/haproxy",
		"haproxy:3.4-alpine":                 "/x/haproxy",
		"haproxy":                            "/x/haproxy",
		HAPTICImage + ":v0.1.0":              "/x/haptic",
		HAPTICImage + "@sha256:0123456789ab": "/x/haptic",
	} {
		got, err := m.lookup(image)
		if err != nil || got.Binary != want {
			t.Errorf("lookup(%s) = %+v, %v; want binary %s", image, got, err, want)
		}
	}
	if hp, _ := m.lookup(HAProxyImage + ":3.4"); hp.StopSignal != syscall.SIGUSR1 {
		t.Errorf("HAProxy's stop signal %v, want SIGUSR1 (its soft stop)", hp.StopSignal)
	}
	if h, _ := m.lookup(HAPTICImage + ":v0.1.0"); !slices.Equal(h.Path, []string{"/x"}) || h.StopSignal != 0 {
		t.Errorf("haptic image: PATH %v, stop signal %v; want haproxy's directory, SIGTERM", h.Path, h.StopSignal)
	}
	if got, err := m.lookup("haproxytech/kubernetes-ingress:3.1"); err == nil {
		t.Errorf("lookup(haproxytech/kubernetes-ingress) = %+v, want no match", got)
	}
}

func TestAContainerCommandRunsTheImageProgramItNames(t *testing.T) {
	h, err := HAPTICImages("/x/haproxy", "/x/bin/haptic").lookup(HAPTICImage + ":v0.1.0")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		c        corev1.Container
		bin      string
		args     []string
		refusing string
	}{
		{"no command: the entrypoint", corev1.Container{Args: []string{"controller"}}, "/x/bin/haptic", []string{"controller"}, ""},
		{"the entrypoint by path", corev1.Container{Command: []string{HAPTICBinary}, Args: []string{"agent"}}, "/x/bin/haptic", []string{"agent"}, ""},
		{"the agent, command args first", corev1.Container{Command: []string{HAPTICAgentBinary, "bootstrap"}, Args: []string{"--base-dir=/b"}}, "/x/bin/haptic-agent", []string{"bootstrap", "--base-dir=/b"}, ""},
		{"a program the image lacks", corev1.Container{Image: HAPTICImage + ":v0.1.0", Command: []string{"/bin/sh"}}, "", nil, "command /bin/sh is not a program of image " + HAPTICImage + ":v0.1.0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bin, args, err := h.entrypoint(&tt.c)
			if tt.refusing != "" {
				if err == nil || !strings.Contains(err.Error(), tt.refusing) {
					t.Fatalf("entrypoint = %s %v, %v; want an error containing %q", bin, args, err, tt.refusing)
				}
				return
			}
			if err != nil || bin != tt.bin || !slices.Equal(args, tt.args) {
				t.Fatalf("entrypoint = %s %v, %v; want %s %v", bin, args, err, tt.bin, tt.args)
			}
		})
	}
}
