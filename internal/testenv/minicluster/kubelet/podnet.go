package kubelet

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"strconv"
	"strings"
)

// podNet is one pod's network namespace ("mc<index>" under /run/netns) and
// its veth pair: "h<index>" in the node namespace, "eth0" in the pod's.
type podNet struct {
	ns   string
	veth string
	ip   netip.Addr
	gw   netip.Addr
}

func newPodNet(index int, ip, gw netip.Addr) podNet {
	return podNet{ns: "mc" + strconv.Itoa(index), veth: "h" + strconv.Itoa(index), ip: ip, gw: gw}
}

// commands are the iproute2 invocations that create the namespace and
// wire it to the node. It does no I/O.
func (n podNet) commands() [][]string {
	ip, gw := n.ip.String(), n.gw.String()
	return [][]string{
		{"netns", "add", n.ns},
		{"link", "add", n.veth, "type", "veth", "peer", "name", "eth0", "netns", n.ns},
		{"addr", "add", gw + "/32", "dev", n.veth},
		{"link", "set", n.veth, "up"},
		{"route", "add", ip + "/32", "dev", n.veth, "src", gw},
		{"-n", n.ns, "link", "set", "lo", "up"},
		{"-n", n.ns, "addr", "add", ip + "/32", "dev", "eth0"},
		{"-n", n.ns, "link", "set", "eth0", "up"},
		{"-n", n.ns, "route", "add", gw, "dev", "eth0", "scope", "link"},
		{"-n", n.ns, "route", "add", "default", "via", gw, "dev", "eth0"},
	}
}

func (n podNet) setup(ctx context.Context) error {
	for _, args := range n.commands() {
		if err := runIP(ctx, args...); err != nil {
			_ = n.teardown(context.WithoutCancel(ctx))
			return fmt.Errorf("pod network %s: %w", n.ns, err)
		}
	}
	return nil
}

// teardown deletes the namespace, which destroys eth0 and with it the
// node-side veth; the explicit link delete covers a half-made setup.
func (n podNet) teardown(ctx context.Context) error {
	_ = runIP(ctx, "link", "del", n.veth)
	if err := runIP(ctx, "netns", "del", n.ns); err != nil && !strings.Contains(err.Error(), "No such file") {
		return fmt.Errorf("pod network %s: %w", n.ns, err)
	}
	return nil
}

func runIP(ctx context.Context, args ...string) error {
	out, err := exec.CommandContext(ctx, "ip", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ip %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// forwardingSysctl turns on IPv4 forwarding in the namespace it is written
// in (the setting is per network namespace).
const forwardingSysctl = "/proc/sys/net/ipv4/ip_forward"

// enableForwarding lets the node's namespace route between pods: a packet
// from one pod's veth to another pod's address is forwarded, as a CNI
// bridge or router would.
func enableForwarding() error {
	b, err := os.ReadFile(forwardingSysctl)
	if err == nil && strings.TrimSpace(string(b)) == "1" {
		return nil
	}
	if err := os.WriteFile(forwardingSysctl, []byte("1\n"), 0o644); err != nil {
		return fmt.Errorf("enable ip forwarding between pods: %w", err)
	}
	return nil
}
