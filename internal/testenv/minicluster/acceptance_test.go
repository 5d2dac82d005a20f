package minicluster_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"

	"github.com/haptic-io/haptic/internal/testenv/minicluster"
	"github.com/haptic-io/haptic/internal/testenv/minicluster/kubelet"
)

// conformanceNamespaces are the namespaces of the Gateway API conformance
// base manifests.
var conformanceNamespaces = []string{"gateway-conformance-infra", "gateway-conformance-app-backend", "gateway-conformance-web-backend"}

// TestClusterRunsConformanceBackendsAsProcessPods is the harness's acceptance
// test: a real control plane plus the process kubelet run the conformance
// base's backend Deployments; every pod becomes Ready with its IP in its
// Service's EndpointSlices, echo-basic answers on podIP:3000 naming its pod,
// pods/log works, and deleting a Deployment removes its pods and endpoints.
func TestClusterRunsConformanceBackendsAsProcessPods(t *testing.T) {
	begin := time.Now()
	c, bins := minicluster.StartT(t)
	t.Logf("control plane ready in %v", c.Started)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cs, err := kubernetes.NewForConfig(c.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}

	crdStart := time.Now()
	if err := minicluster.InstallGatewayCRDs(ctx, c.RESTConfig(), bins.GatewayCRDDir); err != nil {
		t.Fatal(err)
	}
	t.Logf("gateway api crds established in %v", time.Since(crdStart))

	kl := kubelet.StartT(t, kubelet.Config{
		Client:         cs,
		Dir:            filepath.Join(t.TempDir(), "pods"),
		Images:         kubelet.ConformanceImages(bins.EchoBasic),
		ServingCertPEM: c.PKI.Kubelet.CertPEM,
		ServingKeyPEM:  c.PKI.Kubelet.KeyPEM,
	})

	objs, err := minicluster.SplitManifests(mustReadFile(t, bins.ConformanceManifests))
	if err != nil {
		t.Fatal(err)
	}
	var namespaces, workloads []*unstructured.Unstructured
	for _, o := range objs {
		switch o.GetKind() {
		case "Namespace":
			namespaces = append(namespaces, o)
		case "Service", "Deployment", "ConfigMap":
			workloads = append(workloads, o)
		}
	}
	if len(namespaces) != len(conformanceNamespaces) || len(workloads) < 20 {
		t.Fatalf("conformance base: %d namespaces, %d workload objects; want %d and >= 20", len(namespaces), len(workloads), len(conformanceNamespaces))
	}
	if err := minicluster.Apply(ctx, c.RESTConfig(), namespaces); err != nil {
		t.Fatal(err)
	}
	// The suite creates these certificate Secrets itself; the backends mount them.
	for _, s := range []struct{ ns, name string }{
		{"gateway-conformance-infra", "tls-checks-certificate"},
		{"gateway-conformance-app-backend", "tls-checks-certificate"},
		{"gateway-conformance-infra", "tls-passthrough-checks-certificate"},
		{"gateway-conformance-app-backend", "tls-passthrough-checks-certificate"},
	} {
		if _, err := cs.CoreV1().Secrets(s.ns).Create(ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: s.name, Namespace: s.ns},
			Type:       corev1.SecretTypeTLS,
			Data:       map[string][]byte{"tls.crt": c.PKI.Kubelet.CertPEM, "tls.key": c.PKI.Kubelet.KeyPEM},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	applied := time.Now()
	if err := minicluster.Apply(ctx, c.RESTConfig(), workloads); err != nil {
		t.Fatal(err)
	}

	lease, err := cs.CoordinationV1().Leases(corev1.NamespaceNodeLease).Get(ctx, kl.NodeName(), metav1.GetOptions{})
	if err != nil || lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity != kl.NodeName() || lease.Spec.RenewTime == nil {
		t.Fatalf("node lease = %+v, %v; want one held by %s", lease, err, kl.NodeName())
	}
	pods := waitAllReadyWithEndpoints(ctx, t, cs)
	t.Logf("%d pods Ready with endpoints %v after apply (%v after start)", len(pods), time.Since(applied), time.Since(begin))

	hc := &http.Client{Timeout: 5 * time.Second}
	echoes := 0
	for _, p := range pods {
		if !strings.Contains(p.Spec.Containers[0].Image, "echo-basic") || hasEnv(p, "TCP_ECHO_SERVER") || hasEnv(p, "GRPC_ECHO_SERVER") {
			continue
		}
		echo := getEcho(t, hc, p.Status.PodIP)
		if echo.Pod != p.Name || echo.Namespace != p.Namespace {
			t.Errorf("echo from %s = pod %q namespace %q, want %s/%s", p.Status.PodIP, echo.Pod, echo.Namespace, p.Namespace, p.Name)
		}
		echoes++
	}
	if echoes < 8 {
		t.Fatalf("only %d HTTP echo pods answered; want >= 8", echoes)
	}

	// pods/log goes apiserver -> kubelet /containerLogs over HTTPS.
	p := podWithPrefix(t, pods, "gateway-conformance-infra", "infra-backend-v1-")
	logs, err := cs.CoreV1().Pods(p.Namespace).GetLogs(p.Name, &corev1.PodLogOptions{Container: "infra-backend-v1"}).Do(ctx).Raw()
	if err != nil {
		t.Fatalf("pods/log: %v", err)
	}
	if !strings.Contains(string(logs), "Echoing back request made to /") {
		t.Fatalf("pods/log of %s lacks the echoed request:\n%s", p.Name, logs)
	}

	// The secret volume reached tls-backend: it serves HTTPS on 8443 with
	// the certificate from the Secret.
	tp := podWithPrefix(t, pods, "gateway-conformance-infra", "tls-backend-")
	checkTLS(t, tp.Status.PodIP, c.PKI.CA.CertPEM)

	// Deleting a Deployment removes its pods, endpoints and pod networks.
	netnsBefore := netnsCount(t)
	if err := cs.AppsV1().Deployments("gateway-conformance-infra").Delete(ctx, "infra-backend-v1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	deleted := time.Now()
	waitFor(ctx, t, "infra-backend-v1 pods and endpoints to disappear", func() (bool, string) {
		pl, err := cs.CoreV1().Pods("gateway-conformance-infra").List(ctx, metav1.ListOptions{LabelSelector: "app=infra-backend-v1"})
		if err != nil {
			return false, err.Error()
		}
		addrs := endpointAddresses(ctx, t, cs, "gateway-conformance-infra", "infra-backend-v1")
		return len(pl.Items) == 0 && len(addrs) == 0, fmt.Sprintf("%d pods, endpoints %v", len(pl.Items), addrs)
	})
	t.Logf("deployment deleted: pods and endpoints gone in %v", time.Since(deleted))
	if got := netnsCount(t); got != netnsBefore-2 {
		t.Errorf("pod network namespaces: %d after deleting 2 pods, want %d", got, netnsBefore-2)
	}
	if resp, err := hc.Get("http://" + p.Status.PodIP + ":3000/"); err == nil {
		_ = resp.Body.Close()
		t.Errorf("deleted pod %s still answers on %s:3000", p.Name, p.Status.PodIP)
	}
	logRSS(t, c)
	t.Logf("acceptance test took %v", time.Since(begin))
}

// waitAllReadyWithEndpoints waits until the conformance namespaces hold the
// expected pods, all Ready, and each Service's EndpointSlices list exactly
// the ready IPs of the pods it selects.
func waitAllReadyWithEndpoints(ctx context.Context, t *testing.T, cs kubernetes.Interface) []corev1.Pod {
	t.Helper()
	var pods []corev1.Pod
	waitFor(ctx, t, "all conformance backend pods Ready with endpoints", func() (bool, string) {
		pods = pods[:0]
		want := 0
		for _, ns := range conformanceNamespaces {
			ds, err := cs.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				return false, err.Error()
			}
			for _, d := range ds.Items {
				want += int(*d.Spec.Replicas)
			}
			pl, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				return false, err.Error()
			}
			pods = append(pods, pl.Items...)
		}
		var notReady []string
		for _, p := range pods {
			if !podReady(p) || p.Status.PodIP == "" {
				notReady = append(notReady, p.Namespace+"/"+p.Name+" "+podMessage(p))
			}
		}
		if len(pods) != want || len(notReady) > 0 {
			return false, fmt.Sprintf("%d/%d pods, not ready: %v", len(pods), want, notReady)
		}
		for _, ns := range conformanceNamespaces {
			svcs, err := cs.CoreV1().Services(ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				return false, err.Error()
			}
			for _, s := range svcs.Items {
				var wantIPs []string
				for _, p := range pods {
					if p.Namespace == ns && selects(s.Spec.Selector, p.Labels) {
						wantIPs = append(wantIPs, p.Status.PodIP)
					}
				}
				slices.Sort(wantIPs)
				if got := endpointAddresses(ctx, t, cs, ns, s.Name); !slices.Equal(got, wantIPs) {
					return false, fmt.Sprintf("service %s/%s endpoints %v, want %v", ns, s.Name, got, wantIPs)
				}
			}
		}
		return true, ""
	})
	return pods
}

// endpointAddresses lists the ready addresses of a Service's EndpointSlices,
// sorted and de-duplicated.
func endpointAddresses(ctx context.Context, t *testing.T, cs kubernetes.Interface, ns, svc string) []string {
	t.Helper()
	sl, err := cs.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{LabelSelector: "kubernetes.io/service-name=" + svc})
	if err != nil {
		t.Fatalf("list endpointslices: %v", err)
	}
	var out []string
	for _, s := range sl.Items {
		for _, e := range s.Endpoints {
			if e.Conditions.Ready != nil && *e.Conditions.Ready {
				out = append(out, e.Addresses...)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func waitFor(ctx context.Context, t *testing.T, what string, f func() (bool, string)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 150*time.Second)
	defer cancel()
	for {
		ok, state := f()
		if ok {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("timed out waiting for %s; last state: %s", what, state)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

type echoResponse struct {
	Path      string `json:"path"`
	Namespace string `json:"namespace"`
	Pod       string `json:"pod"`
}

func getEcho(t *testing.T, hc *http.Client, ip string) echoResponse {
	t.Helper()
	resp, err := hc.Get("http://" + ip + ":3000/hello")
	if err != nil {
		t.Fatalf("GET %s:3000: %v", ip, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var e echoResponse
	if err := json.Unmarshal(body, &e); err != nil || e.Path != "/hello" {
		t.Fatalf("GET %s:3000/hello: %s %q (%v)", ip, resp.Status, body, err)
	}
	return e
}

// checkTLS completes a TLS handshake with ip:8443, verifying the chain
// against caPEM. The Secret holds the kubelet serving certificate, which
// names localhost.
func checkTLS(t *testing.T, ip string, caPEM []byte) {
	t.Helper()
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	d := &tls.Dialer{NetDialer: &net.Dialer{Timeout: 5 * time.Second},
		Config: &tls.Config{RootCAs: pool, ServerName: "localhost", MinVersion: tls.VersionTLS12}}
	conn, err := d.Dial("tcp", net.JoinHostPort(ip, "8443"))
	if err != nil {
		t.Fatalf("tls-backend %s:8443: %v", ip, err)
	}
	_ = conn.Close()
}

func podReady(p corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func podMessage(p corev1.Pod) string {
	for _, c := range p.Status.Conditions {
		if c.Message != "" {
			return c.Message
		}
	}
	return string(p.Status.Phase)
}

func selects(sel, labels map[string]string) bool {
	if len(sel) == 0 {
		return false
	}
	for k, v := range sel {
		if labels[k] != v {
			return false
		}
	}
	return true
}

func hasEnv(p corev1.Pod, name string) bool {
	for _, e := range p.Spec.Containers[0].Env {
		if e.Name == name {
			return true
		}
	}
	return false
}

func podWithPrefix(t *testing.T, pods []corev1.Pod, ns, prefix string) corev1.Pod {
	t.Helper()
	for _, p := range pods {
		if p.Namespace == ns && strings.HasPrefix(p.Name, prefix) {
			return p
		}
	}
	t.Fatalf("no pod %s/%s*", ns, prefix)
	return corev1.Pod{}
}

func netnsCount(t *testing.T) int {
	t.Helper()
	entries, err := os.ReadDir("/run/netns")
	if err != nil {
		t.Fatal(err)
	}
	return len(entries)
}

// logRSS logs the resident memory of the control-plane processes.
func logRSS(t *testing.T, c *minicluster.Cluster) {
	t.Helper()
	var parts []string
	for name, b := range c.RSS() {
		parts = append(parts, fmt.Sprintf("%s=%dMiB", name, b>>20))
	}
	slices.Sort(parts)
	t.Logf("control plane RSS: %s", strings.Join(parts, " "))
}

func mustReadFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
