package kubelet

import (
	"errors"
	"net/netip"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestIPPoolHandsOutHostsAfterTheGatewayAndWraps(t *testing.T) {
	p, err := newIPPool(netip.MustParsePrefix("10.0.0.0/29"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := p.gateway(), netip.MustParseAddr("10.0.0.1"); got != want {
		t.Fatalf("gateway = %s, want %s", got, want)
	}
	var got []string
	for range 5 {
		a, err := p.allocate()
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, a.String())
	}
	want := []string{"10.0.0.2", "10.0.0.3", "10.0.0.4", "10.0.0.5", "10.0.0.6"}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("allocations (-want +got):\n%s", d)
	}
	if _, err := p.allocate(); !errors.Is(err, ErrPoolExhausted) {
		t.Fatalf("allocate on a full pool: err = %v, want ErrPoolExhausted", err)
	}
	p.release(netip.MustParseAddr("10.0.0.4"))
	p.release(netip.MustParseAddr("10.0.0.4")) // double release is a no-op
	a, err := p.allocate()
	if err != nil || a.String() != "10.0.0.4" {
		t.Fatalf("allocate after release = %s, %v; want 10.0.0.4", a, err)
	}
	if _, err := p.allocate(); !errors.Is(err, ErrPoolExhausted) {
		t.Fatalf("double release must not free two slots: err = %v", err)
	}
}

func TestIPPoolReusesReleasedAddressesLast(t *testing.T) {
	p, err := newIPPool(netip.MustParsePrefix("198.18.0.0/15"))
	if err != nil {
		t.Fatal(err)
	}
	a, _ := p.allocate()
	p.release(a)
	b, _ := p.allocate()
	if a == b {
		t.Fatalf("released %s was handed out again at once", a)
	}
	if got, want := p.index(b), 3; got != want {
		t.Fatalf("index(%s) = %d, want %d", b, got, want)
	}
}

func TestIPPoolRejectsUnusablePrefixes(t *testing.T) {
	for _, s := range []string{"10.0.0.0/30", "fd00::/64"} {
		if _, err := newIPPool(netip.MustParsePrefix(s)); err == nil {
			t.Errorf("newIPPool(%s) succeeded, want an error", s)
		}
	}
}

func TestIPPoolIndexAndAddrAtAgreeAcrossOctets(t *testing.T) {
	base := netip.MustParseAddr("198.18.0.0")
	p, _ := newIPPool(netip.MustParsePrefix("198.18.0.0/15"))
	for _, off := range []int{2, 255, 256, 65535, 65536, 131069} {
		a := addrAt(base, off)
		if got := p.index(a); got != off {
			t.Errorf("index(addrAt(%d) = %s) = %d", off, a, got)
		}
	}
}
