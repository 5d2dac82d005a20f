package kubelet

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestPodNetCommandsWireThePodToTheNodeGateway(t *testing.T) {
	n := newPodNet(7, netip.MustParseAddr("198.18.0.7"), netip.MustParseAddr("198.18.0.1"))
	var got []string
	for _, c := range n.commands() {
		got = append(got, strings.Join(c, " "))
	}
	want := []string{
		"netns add mc7",
		"link add h7 type veth peer name eth0 netns mc7",
		"addr add 198.18.0.1/32 dev h7",
		"link set h7 up",
		"route add 198.18.0.7/32 dev h7 src 198.18.0.1",
		"-n mc7 link set lo up",
		"-n mc7 addr add 198.18.0.7/32 dev eth0",
		"-n mc7 link set eth0 up",
		"-n mc7 route add 198.18.0.1 dev eth0 scope link",
		"-n mc7 route add default via 198.18.0.1 dev eth0",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("commands (-want +got):\n%s", d)
	}
}

func TestPodNetNamesFitTheInterfaceNameLimit(t *testing.T) {
	n := newPodNet(131069, netip.MustParseAddr("198.19.255.253"), netip.MustParseAddr("198.18.0.1"))
	if len(n.veth) > 15 || len(n.ns) > 15 {
		t.Fatalf("names %q/%q exceed 15 bytes", n.veth, n.ns)
	}
}
