package kubelet

import (
	"errors"
	"fmt"
	"net/netip"
)

// ErrPoolExhausted is returned by ipPool.allocate when every address is used.
var ErrPoolExhausted = errors.New("kubelet: pod ip pool exhausted")

// ipPool hands out pod IPs from an IPv4 prefix. The first host address is the
// node-side gateway; the network and broadcast addresses are never handed
// out. Allocation walks forward from the last address handed out, so a
// released IP is reused as late as possible. Not safe for concurrent use.
type ipPool struct {
	prefix netip.Prefix
	first  netip.Addr // first allocatable (gateway + 1)
	last   netip.Addr // last allocatable (broadcast - 1)
	next   netip.Addr
	used   map[netip.Addr]bool
	free   int
}

func newIPPool(prefix netip.Prefix) (*ipPool, error) {
	prefix = prefix.Masked()
	if !prefix.Addr().Is4() || prefix.Bits() > 29 {
		return nil, fmt.Errorf("kubelet: pod CIDR %s: need an IPv4 prefix of /29 or larger", prefix)
	}
	base := prefix.Addr()
	size := 1 << (32 - prefix.Bits())
	first := base.Next().Next()
	last := addrAt(base, size-2)
	return &ipPool{prefix: prefix, first: first, last: last, next: first, used: map[netip.Addr]bool{}, free: size - 3}, nil
}

// gateway is the node-side address of every pod's veth.
func (p *ipPool) gateway() netip.Addr { return p.prefix.Addr().Next() }

func (p *ipPool) allocate() (netip.Addr, error) {
	if p.free == 0 {
		return netip.Addr{}, ErrPoolExhausted
	}
	for {
		a := p.next
		if p.next == p.last {
			p.next = p.first
		} else {
			p.next = p.next.Next()
		}
		if !p.used[a] {
			p.used[a] = true
			p.free--
			return a, nil
		}
	}
}

// release returns a to the pool; releasing an address not handed out is a
// no-op.
func (p *ipPool) release(a netip.Addr) {
	if p.used[a] {
		delete(p.used, a)
		p.free++
	}
}

// index is a's offset in the prefix, used to name the pod's netns and veth.
func (p *ipPool) index(a netip.Addr) int {
	b, o := p.prefix.Addr().As4(), a.As4()
	return int(be32(o) - be32(b))
}

func addrAt(base netip.Addr, off int) netip.Addr {
	b := base.As4()
	v := be32(b) + uint32(off)
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})
}

func be32(b [4]byte) uint32 {
	return uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
}
