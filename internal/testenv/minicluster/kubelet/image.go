package kubelet

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	corev1 "k8s.io/api/core/v1"
)

// Image says how to run a container image as a local process.
type Image struct {
	// Binary is the executable run as the container's entrypoint. Empty
	// means "run nothing": the container counts as running and, with no
	// ReadyPorts, ready. Use it only for images the tests never send traffic
	// to (the conformance base's coredns, for UDPRoute tests).
	Binary string
	// ReadyPorts are TCP ports probed for readiness when the container
	// declares no ports.
	ReadyPorts []int
	// StopSignal is the image's STOPSIGNAL, which a container runtime
	// sends instead of SIGTERM to stop the container; zero means SIGTERM.
	StopSignal syscall.Signal
	// Commands maps the image's programs, by the path a container's
	// command names them (e.g. "/usr/local/bin/haptic-agent"), to the
	// executables run for them. A container with a command runs the
	// program it names, as a runtime runs a command over the image's
	// entrypoint; a command the map does not hold is an error.
	Commands map[string]string
	// Path lists directories put in front of the container's PATH: the
	// image's own programs (the haptic image carries haproxy, which the
	// controller runs for its checks).
	Path []string
}

// Images maps an image reference prefix (e.g.
// "registry.k8s.io/gateway-api/echo-basic") to how it runs. The longest
// matching prefix wins.
type Images map[string]Image

// EchoBasicImage is the Gateway API conformance backend's image name, any tag.
const EchoBasicImage = "registry.k8s.io/gateway-api/echo-basic"

// ConformanceImages maps the images of the Gateway API conformance base
// manifests: echo-basic to echoBasic (probed on :3000), coredns to nothing.
func ConformanceImages(echoBasic string) Images {
	return Images{
		EchoBasicImage:                    {Binary: echoBasic, ReadyPorts: []int{3000}},
		"registry.k8s.io/coredns/coredns": {},
	}
}

// Image references of HAPTIC's own pods, any tag. The HAProxy pod's
// manifests use HAProxyImage:3.4 and HAPTICImage:<version>.
const (
	HAProxyImage = "docker.io/haproxytech/haproxy-debian"
	HAPTICImage  = "ghcr.io/haptic-io/haptic"
)

// HAPTICImages maps the images of HAPTIC's HAProxy pod: [HAProxyImage]
// (and the short and official-image spellings of HAProxy: haproxy,
// docker.io/library/haproxy, haproxytech/haproxy-debian) to the haproxy
// binary, whatever the tag, and [HAPTICImage] to the haptic binary. The
// haptic image's programs are /usr/local/bin/haptic (its entrypoint) and
// /usr/local/bin/haptic-agent, which is the file of that name beside
// haptic. Neither image has ReadyPorts: the pod declares its ports and
// probes. The HAProxy images stop with SIGUSR1 (HAProxy's soft stop: the
// listeners close, connections finish), as their STOPSIGNAL says; the
// haptic image has haproxy on its PATH, as the image built on HAProxy's
// has.
func HAPTICImages(haproxy, haptic string) Images {
	hp := Image{Binary: haproxy, StopSignal: syscall.SIGUSR1}
	return Images{
		HAProxyImage:                 hp,
		"haproxytech/haproxy-debian": hp,
		"docker.io/library/haproxy":  hp,
		"haproxy":                    hp,
		HAPTICImage: {Binary: haptic, Path: []string{filepath.Dir(haproxy)}, Commands: map[string]string{
			HAPTICBinary:      haptic,
			HAPTICAgentBinary: filepath.Join(filepath.Dir(haptic), filepath.Base(HAPTICAgentBinary)),
		}},
	}
}

// The programs of [HAPTICImage], by their path in the image.
const (
	HAPTICBinary      = "/usr/local/bin/haptic"
	HAPTICAgentBinary = "/usr/local/bin/haptic-agent"
)

// entrypoint is what container c of the image runs: the binary and its
// arguments, unexpanded. Without a command that is the image's Binary with
// c's args; with one, the program Commands maps command[0] to, with the
// rest of the command before the args.
func (im Image) entrypoint(c *corev1.Container) (string, []string, error) {
	if len(c.Command) == 0 {
		return im.Binary, c.Args, nil
	}
	bin, ok := im.Commands[c.Command[0]]
	if !ok {
		return "", nil, fmt.Errorf("command %s is not a program of image %s (known: %s)", c.Command[0], c.Image, strings.Join(sortedStrings(slices.Collect(maps.Keys(im.Commands))), ", "))
	}
	return bin, append(slices.Clip(c.Command[1:]), c.Args...), nil
}

// lookup returns the entry whose prefix is the longest that image starts
// with; the prefix must end at a ':', '@' or '/' boundary or the end.
func (m Images) lookup(image string) (Image, error) {
	best, found := "", false
	for p := range m {
		if !strings.HasPrefix(image, p) || (found && len(p) <= len(best)) {
			continue
		}
		if rest := image[len(p):]; rest != "" && !strings.ContainsAny(rest[:1], ":@/") && !strings.HasSuffix(p, "/") {
			continue
		}
		best, found = p, true
	}
	if !found {
		return Image{}, fmt.Errorf("image %q has no local binary (known prefixes: %s)", image, strings.Join(m.prefixes(), ", "))
	}
	return m[best], nil
}

func (m Images) prefixes() []string {
	out := make([]string, 0, len(m))
	for p := range m {
		out = append(out, p)
	}
	return sortedStrings(out)
}
