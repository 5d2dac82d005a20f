package kubelet

import (
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func TestReadinessOfPrefersTheProbeThenDeclaredPortsThenTheImage(t *testing.T) {
	ports := []corev1.ContainerPort{{Name: "http", ContainerPort: 80}, {Name: "dns", ContainerPort: 53, Protocol: corev1.ProtocolUDP}, {Name: "api", ContainerPort: 5555}}
	tests := map[string]struct {
		c    corev1.Container
		want readiness
	}{
		"no probe, no ports: the image's": {
			c:    corev1.Container{Name: "c"},
			want: readiness{tcpPorts: []int{3000}},
		},
		"no probe: the declared TCP ports": {
			c:    corev1.Container{Name: "c", Ports: ports},
			want: readiness{tcpPorts: []int{80, 5555}},
		},
		"httpGet on a named port, defaults filled": {
			c: corev1.Container{Name: "c", Ports: ports, ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{
				HTTPGet: &corev1.HTTPGetAction{Port: intstr.FromString("api")}}}},
			want: readiness{httpGet: &httpGet{scheme: corev1.URISchemeHTTP, port: 5555, path: "/"}},
		},
		"httpGet on a number": {
			c: corev1.Container{Name: "c", ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{
				HTTPGet: &corev1.HTTPGetAction{Port: intstr.FromInt32(8080), Path: "/readyz", Scheme: corev1.URISchemeHTTPS}}}},
			want: readiness{httpGet: &httpGet{scheme: corev1.URISchemeHTTPS, port: 8080, path: "/readyz"}},
		},
		"tcpSocket": {
			c: corev1.Container{Name: "c", Ports: ports, ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{
				TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromString("http")}}}},
			want: readiness{tcpPorts: []int{80}},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := readinessOf(&tc.c, []int{3000})
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, got, cmp.AllowUnexported(readiness{}, httpGet{})); d != "" {
				t.Errorf("readiness (-want +got):\n%s", d)
			}
		})
	}
}

func TestReadinessOfRefusesWhatItCannotRun(t *testing.T) {
	for name, p := range map[string]*corev1.Probe{
		"exec":         {ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"true"}}}},
		"unknown name": {ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Port: intstr.FromString("nope")}}},
		"port zero":    {ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(0)}}},
	} {
		if _, err := readinessOf(&corev1.Container{Name: "c", ReadinessProbe: p}, nil); err == nil {
			t.Errorf("%s: readinessOf accepted the probe", name)
		}
	}
}

func TestReadinessCheckHTTPGetPassesOn2xxAnd3xxOnly(t *testing.T) {
	status := http.StatusServiceUnavailable
	var gotHost string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/readyz" {
			http.NotFound(w, r)
			return
		}
		gotHost = r.Host
		if status == http.StatusFound {
			http.Redirect(w, r, "/elsewhere", status)
			return
		}
		w.WriteHeader(status)
	}))
	defer srv.Close()
	_, p, _ := net.SplitHostPort(srv.Listener.Addr().String())
	port, _ := strconv.Atoi(p)
	ip := netip.MustParseAddr("127.0.0.1")
	rd := readiness{httpGet: &httpGet{scheme: corev1.URISchemeHTTP, port: port, path: "/readyz",
		headers: []corev1.HTTPHeader{{Name: "Host", Value: "probe.test"}}}}
	for _, tc := range []struct {
		status int
		want   bool
	}{{http.StatusServiceUnavailable, false}, {http.StatusOK, true}, {http.StatusFound, true}, {http.StatusUnauthorized, false}} {
		status = tc.status
		if got := rd.check(ip); got != tc.want {
			t.Errorf("check with the server answering %d = %v, want %v", tc.status, got, tc.want)
		}
	}
	if gotHost != "probe.test" {
		t.Errorf("Host = %q, want the probe's Host header", gotHost)
	}
	if (readiness{httpGet: &httpGet{scheme: corev1.URISchemeHTTP, port: port, path: "/missing"}}).check(ip) {
		t.Error("check of a 404 path passed")
	}
	if !(readiness{tcpPorts: []int{port}}).check(ip) || !(readiness{}).check(ip) {
		t.Error("TCP check of a listening port, or a check with nothing to probe, failed")
	}
}
