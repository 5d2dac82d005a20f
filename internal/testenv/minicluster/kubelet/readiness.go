package kubelet

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// probeTimeout bounds one readiness check. Checks run in the sync loop one
// after another, so it is kept well below the sync interval's scale.
const probeTimeout = 500 * time.Millisecond

// readiness is how a container's readiness is checked: an HTTP GET when
// httpGet is set, else a TCP connect to every port in tcpPorts. With
// neither, a started container is ready.
type readiness struct {
	tcpPorts []int
	httpGet  *httpGet
}

// httpGet is a readinessProbe's httpGet, its port resolved.
type httpGet struct {
	scheme  corev1.URIScheme
	host    string // empty: the pod IP
	port    int
	path    string
	headers []corev1.HTTPHeader
}

// readinessOf derives a container's readiness check: its readinessProbe
// (httpGet or tcpSocket) when it has one, else a TCP connect to its
// declared TCP ports, else to the image's ReadyPorts. exec and grpc probes
// are refused. Probe timings (initialDelaySeconds, periodSeconds, …) are
// not honoured: the check runs on every sync until it passes once. It does
// no I/O.
func readinessOf(c *corev1.Container, imagePorts []int) (readiness, error) {
	if p := c.ReadinessProbe; p != nil {
		switch h := p.ProbeHandler; {
		case h.HTTPGet != nil:
			port, err := probePort(c, h.HTTPGet.Port)
			if err != nil {
				return readiness{}, err
			}
			scheme := h.HTTPGet.Scheme
			if scheme == "" {
				scheme = corev1.URISchemeHTTP
			}
			path := h.HTTPGet.Path
			if path == "" {
				path = "/"
			}
			return readiness{httpGet: &httpGet{scheme: scheme, host: h.HTTPGet.Host, port: port, path: path, headers: h.HTTPGet.HTTPHeaders}}, nil
		case h.TCPSocket != nil:
			port, err := probePort(c, h.TCPSocket.Port)
			if err != nil {
				return readiness{}, err
			}
			return readiness{tcpPorts: []int{port}}, nil
		default:
			return readiness{}, fmt.Errorf("container %s: readinessProbe: only httpGet and tcpSocket are supported by the process kubelet", c.Name)
		}
	}
	if len(c.Ports) == 0 {
		return readiness{tcpPorts: imagePorts}, nil
	}
	var ports []int
	for _, p := range c.Ports {
		if p.Protocol == "" || p.Protocol == corev1.ProtocolTCP {
			ports = append(ports, int(p.ContainerPort))
		}
	}
	return readiness{tcpPorts: ports}, nil
}

// probePort resolves a probe's port, a number or the name of one of the
// container's ports.
func probePort(c *corev1.Container, port intstr.IntOrString) (int, error) {
	if port.Type == intstr.Int {
		if port.IntVal <= 0 || port.IntVal > 65535 {
			return 0, fmt.Errorf("container %s: readinessProbe port %d is out of range", c.Name, port.IntVal)
		}
		return int(port.IntVal), nil
	}
	for _, p := range c.Ports {
		if p.Name == port.StrVal {
			return int(p.ContainerPort), nil
		}
	}
	if n, err := strconv.Atoi(port.StrVal); err == nil && n > 0 && n <= 65535 {
		return n, nil
	}
	return 0, fmt.Errorf("container %s: readinessProbe port %q names no container port", c.Name, port.StrVal)
}

// check runs the readiness check against the pod at ip once. An HTTP check
// passes on a status in [200, 400), as the kubelet's does; HTTPS is not
// verified, as the kubelet does not verify it.
func (r readiness) check(ip netip.Addr) bool {
	if g := r.httpGet; g != nil {
		return g.check(ip)
	}
	for _, p := range r.tcpPorts {
		conn, err := net.DialTimeout("tcp", net.JoinHostPort(ip.String(), strconv.Itoa(p)), probeTimeout)
		if err != nil {
			return false
		}
		_ = conn.Close()
	}
	return true
}

func (g *httpGet) check(ip netip.Addr) bool {
	host := g.host
	if host == "" {
		host = ip.String()
	}
	ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
	defer cancel()
	scheme := "http"
	if g.scheme == corev1.URISchemeHTTPS {
		scheme = "https"
	}
	u := scheme + "://" + net.JoinHostPort(host, strconv.Itoa(g.port)) + g.path
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return false
	}
	req.Header.Set("User-Agent", "kube-probe/1.37")
	for _, h := range g.headers {
		if h.Name == "Host" {
			req.Host = h.Value
			continue
		}
		req.Header.Add(h.Name, h.Value)
	}
	tr := &http.Transport{
		TLSClientConfig:   &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // the kubelet does not verify probe certificates
		DisableKeepAlives: true,
	}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
	if err != nil {
		return false
	}
	_ = resp.Body.Close()
	return resp.StatusCode >= 200 && resp.StatusCode < 400
}
