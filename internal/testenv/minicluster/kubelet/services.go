package kubelet

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	discoverylisters "k8s.io/client-go/listers/discovery/v1"
)

// serviceProxy is the node's kube-proxy, in user space: every TCP port of
// every Service with a ClusterIP gets a listener on that IP in the node's
// namespace (the IP is added to lo), and each connection it accepts is
// spliced to one endpoint picked at random from the Service's
// EndpointSlices: a ready one, else a serving one that terminates (as
// kube-proxy falls back). Pods reach ClusterIPs through their default
// route, the node. Service default/kubernetes goes to the API server
// (its endpoints are not kept: the apiserver listens on loopback). A
// connection lives until either side closes, also when its endpoint
// leaves the Service, as a conntrack entry does.
type serviceProxy struct {
	client    kubernetes.Interface
	apiServer string
	log       *slog.Logger

	services corelisters.ServiceLister
	slices   discoverylisters.EndpointSliceLister

	mu        sync.Mutex // guards listeners, addrs, open
	listeners map[string]*svcListener
	addrs     map[string]bool
	open      map[net.Conn]bool // both ends of every proxied connection
	conns     sync.WaitGroup
}

// svcListener serves one port of one Service.
type svcListener struct {
	ns, name, port string // port: the Service port's name
	ln             net.Listener
	done           chan struct{}
}

// proxyResync is how often the listeners follow the Services.
const proxyResync = 250 * time.Millisecond

// run starts the informers and serves until ctx ends; then it closes the
// listeners, removes the addresses and waits for the connections it
// proxies to end (they end with their peers; the pods are gone by then).
func (p *serviceProxy) run(ctx context.Context) {
	f := informers.NewSharedInformerFactory(p.client, 0)
	p.services = f.Core().V1().Services().Lister()
	p.slices = f.Discovery().V1().EndpointSlices().Lister()
	f.Start(ctx.Done())
	defer f.Shutdown()
	f.WaitForCacheSync(ctx.Done())
	p.mu.Lock()
	p.listeners, p.addrs, p.open = map[string]*svcListener{}, map[string]bool{}, map[net.Conn]bool{}
	p.mu.Unlock()
	defer p.closeAll()
	t := time.NewTicker(proxyResync)
	defer t.Stop()
	for {
		p.resync(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// resync opens a listener for each Service port that has none and closes
// those whose port is gone.
func (p *serviceProxy) resync(ctx context.Context) {
	svcs, err := p.services.List(labels.Everything())
	if err != nil {
		return
	}
	want := map[string]*corev1.Service{}
	ports := map[string]corev1.ServicePort{}
	for _, s := range svcs {
		ip := s.Spec.ClusterIP
		if ip == "" || ip == corev1.ClusterIPNone || net.ParseIP(ip).To4() == nil {
			continue
		}
		for _, sp := range s.Spec.Ports {
			if sp.Protocol != "" && sp.Protocol != corev1.ProtocolTCP {
				continue
			}
			key := net.JoinHostPort(ip, strconv.Itoa(int(sp.Port)))
			want[key], ports[key] = s, sp
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for key, l := range p.listeners {
		s, ok := want[key]
		if !ok || s.Namespace != l.ns || s.Name != l.name || ports[key].Name != l.port {
			_ = l.ln.Close()
			<-l.done
			delete(p.listeners, key)
		}
	}
	for key, s := range want {
		if _, ok := p.listeners[key]; ok {
			continue
		}
		ip := s.Spec.ClusterIP
		if !p.addrs[ip] {
			if err := runIP(ctx, "addr", "add", ip+"/32", "dev", "lo"); err != nil && !strings.Contains(err.Error(), "File exists") {
				p.log.Warn("service proxy: add address", "ip", ip, "err", err)
				continue
			}
			p.addrs[ip] = true
		}
		ln, err := net.Listen("tcp", key)
		if err != nil {
			p.log.Warn("service proxy: listen", "service", s.Namespace+"/"+s.Name, "addr", key, "err", err)
			continue
		}
		l := &svcListener{ns: s.Namespace, name: s.Name, port: ports[key].Name, ln: ln, done: make(chan struct{})}
		p.listeners[key] = l
		go p.serve(l)
	}
}

func (p *serviceProxy) serve(l *svcListener) {
	defer close(l.done)
	for {
		c, err := l.ln.Accept()
		if err != nil {
			if !errors.Is(err, net.ErrClosed) {
				p.log.Warn("service proxy: accept", "service", l.ns+"/"+l.name, "err", err)
			}
			return
		}
		p.conns.Add(1)
		go func() {
			defer p.conns.Done()
			p.proxy(c, l)
		}()
	}
}

// proxy splices c to an endpoint of l's Service; with none, or when the
// dial fails, c is closed (a real proxy rejects the SYN instead).
func (p *serviceProxy) proxy(c net.Conn, l *svcListener) {
	defer c.Close()
	target := p.apiServer
	if l.ns != "default" || l.name != "kubernetes" {
		var err error
		if target, err = p.endpoint(l.ns, l.name, l.port); err != nil {
			p.log.Debug("service proxy: no endpoint", "service", l.ns+"/"+l.name, "err", err)
			return
		}
	}
	up, err := net.DialTimeout("tcp", target, 2*time.Second)
	if err != nil {
		p.log.Debug("service proxy: dial", "service", l.ns+"/"+l.name, "endpoint", target, "err", err)
		return
	}
	defer up.Close()
	if !p.track(c, up) {
		return
	}
	defer p.untrack(c, up)
	var wg sync.WaitGroup
	wg.Go(func() {
		// The client half-closed: so does the upstream side, whose
		// answer may still follow.
		_, _ = io.Copy(up, c)
		if tc, ok := up.(*net.TCPConn); ok {
			_ = tc.CloseWrite()
		}
	})
	// The endpoint closed (or failed): the connection is over, both ways.
	_, _ = io.Copy(c, up)
	_ = c.Close()
	_ = up.Close()
	wg.Wait()
}

// endpoint picks an address for port (a Service port's name) of Service
// ns/name: a ready endpoint at random, else a serving, terminating one.
func (p *serviceProxy) endpoint(ns, name, port string) (string, error) {
	sel := labels.SelectorFromSet(labels.Set{discoveryv1.LabelServiceName: name})
	slices, err := p.slices.EndpointSlices(ns).List(sel)
	if err != nil {
		return "", err
	}
	return pickEndpoint(slices, port)
}

// pickEndpoint is endpoint's choice over slices. It does no I/O.
func pickEndpoint(slices []*discoveryv1.EndpointSlice, port string) (string, error) {
	var ready, serving []string
	for _, s := range slices {
		if s.AddressType != discoveryv1.AddressTypeIPv4 {
			continue
		}
		num := int32(0)
		for _, sp := range s.Ports {
			if sp.Port != nil && (sp.Name == nil && port == "" || sp.Name != nil && *sp.Name == port) {
				num = *sp.Port
			}
		}
		if num == 0 {
			continue
		}
		for _, e := range s.Endpoints {
			if len(e.Addresses) == 0 {
				continue
			}
			addr := net.JoinHostPort(e.Addresses[0], strconv.Itoa(int(num)))
			switch c := e.Conditions; {
			case c.Ready == nil || *c.Ready:
				ready = append(ready, addr)
			case c.Serving != nil && *c.Serving:
				serving = append(serving, addr)
			}
		}
	}
	if len(ready) == 0 {
		ready = serving
	}
	if len(ready) == 0 {
		return "", fmt.Errorf("no ready endpoint for port %q in %d EndpointSlices", port, len(slices))
	}
	return ready[rand.IntN(len(ready))], nil //nolint:gosec // load spreading, not security
}

func (p *serviceProxy) closeAll() {
	p.mu.Lock()
	for key, l := range p.listeners {
		_ = l.ln.Close()
		<-l.done
		delete(p.listeners, key)
	}
	for ip := range p.addrs {
		_ = runIP(context.Background(), "addr", "del", ip+"/32", "dev", "lo")
	}
	// A connection whose client pod is gone can wait on its endpoint for
	// minutes (an API server watch sends nothing): cut them all.
	for conn := range p.open {
		_ = conn.Close()
	}
	p.open = nil
	p.mu.Unlock()
	p.conns.Wait()
}

// track records the two ends of a proxied connection; false once the
// proxy is closing (nil open), when the caller just closes them.
func (p *serviceProxy) track(conns ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.open == nil {
		return false
	}
	for _, c := range conns {
		p.open[c] = true
	}
	return true
}

func (p *serviceProxy) untrack(conns ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range conns {
		delete(p.open, c)
	}
}
