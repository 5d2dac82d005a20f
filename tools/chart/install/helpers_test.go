package install_test

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/release"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/haptic-io/haptic/agentapi"
	"github.com/haptic-io/haptic/internal/haproxytest"
	"github.com/haptic-io/haptic/internal/testenv/minicluster"
	"github.com/haptic-io/haptic/internal/testenv/minicluster/kubelet"
)

// Paths from this package's directory (where go test runs).
var (
	repoRoot = filepath.Join("..", "..", "..")
	chartDir = filepath.Join(repoRoot, "charts", "haptic")
)

// The release, as in the README's `helm install haptic charts/haptic -n
// haptic`, and the namespace of the test's backends and Ingresses.
const (
	releaseName = "haptic"
	ns          = "haptic"
	appNS       = "shop"
)

// waitTimeout bounds every wait for the cluster to converge.
const waitTimeout = 2 * time.Minute

// env is a mini cluster whose kubelet runs pods in-cluster, with the
// chart's images mapped to HAProxy 3.4 and the haptic binary built from
// the module, and a Helm action configuration on it.
type env struct {
	*minicluster.Cluster
	ctx     context.Context
	client  kubernetes.Interface
	dyn     dynamic.Interface
	disc    discovery.DiscoveryInterface
	helm    *action.Configuration
	haptic  string
	kubelet *kubelet.Kubelet
}

func startEnv(t *testing.T) *env {
	t.Helper()
	minicluster.RequireT(t)
	haproxy := haproxytest.Binary(t, "3.4")
	haptic := hapticBinary(t)
	mc, bins := minicluster.StartT(t)
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Minute)
	t.Cleanup(cancel)
	cs, err := kubernetes.NewForConfig(mc.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(mc.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	disc, err := discovery.NewDiscoveryClientForConfig(mc.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	// The gate's haproxy -c runs as nobody in the controller pod's
	// scratch volume: every directory above the pods' must let it pass,
	// which t.TempDir's do not.
	pods, err := os.MkdirTemp("", "haptic-chart-pods-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(pods) })
	if err := os.Chmod(pods, 0o755); err != nil {
		t.Fatal(err)
	}
	images := kubelet.HAPTICImages(haproxy, haptic)
	maps.Copy(images, kubelet.ConformanceImages(bins.EchoBasic))
	kl := kubelet.StartT(t, kubelet.Config{
		Client: cs, Dir: pods, Images: images,
		ServingCertPEM: mc.PKI.Kubelet.CertPEM, ServingKeyPEM: mc.PKI.Kubelet.KeyPEM,
		APIServer: strings.TrimPrefix(mc.Server, "https://"),
	})
	kubeconfig, namespace := mc.KubeconfigPath, ns
	flags := genericclioptions.NewConfigFlags(false)
	flags.KubeConfig, flags.Namespace = &kubeconfig, &namespace
	cfg := new(action.Configuration)
	if err := cfg.Init(flags, ns, "secret", func(format string, v ...any) { t.Logf("helm: "+format, v...) }); err != nil {
		t.Fatal(err)
	}
	return &env{Cluster: mc, ctx: ctx, client: cs, dyn: dyn, disc: disc, helm: cfg, haptic: haptic, kubelet: kl}
}

// hapticDir holds the haptic binary hapticBinary built; TestMain removes it.
var hapticDir string

// hapticBinary builds ./cmd/haptic and ./cmd/haptic-agent from the
// repository root into a directory every user may read (the kubelet runs
// them for each pod) and returns haptic's path.
func hapticBinary(t *testing.T) string {
	t.Helper()
	var err error
	if hapticDir, err = os.MkdirTemp("", "haptic-chart-bin-"); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(hapticDir, 0o755); err != nil {
		t.Fatal(err)
	}
	bin, err := filepath.Abs(filepath.Join(hapticDir, "haptic"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "build", "-o", hapticDir+"/", "./cmd/haptic", "./cmd/haptic-agent")
	cmd.Dir = repoRoot
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/haptic ./cmd/haptic-agent: %v\n%s", err, out)
	}
	return bin
}

// install runs `helm install haptic charts/haptic -n haptic` with values.
func (e *env) install(t *testing.T, values map[string]any) *release.Release {
	t.Helper()
	c, err := loader.Load(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	in := action.NewInstall(e.helm)
	in.ReleaseName, in.Namespace = releaseName, ns
	in.Timeout = time.Minute
	rel, err := in.RunWithContext(e.ctx, c, values)
	if err != nil {
		t.Fatalf("helm install: %v", err)
	}
	return rel
}

// upgrade runs `helm upgrade haptic charts/haptic -n haptic` with values
// (the whole set, not reused).
func (e *env) upgrade(t *testing.T, values map[string]any) *release.Release {
	t.Helper()
	c, err := loader.Load(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	up := action.NewUpgrade(e.helm)
	up.Namespace = ns
	up.Timeout = time.Minute
	rel, err := up.RunWithContext(e.ctx, releaseName, c, values)
	if err != nil {
		t.Fatalf("helm upgrade: %v", err)
	}
	return rel
}

// uninstall runs `helm uninstall haptic -n haptic`.
func (e *env) uninstall(t *testing.T) {
	t.Helper()
	un := action.NewUninstall(e.helm)
	un.Timeout = time.Minute
	if _, err := un.Run(releaseName); err != nil {
		t.Fatalf("helm uninstall: %v", err)
	}
}

// poll calls f every 200 ms until it reports done, for at most
// waitTimeout; on a timeout it fails the test with what and f's last
// state.
func poll(ctx context.Context, t testing.TB, what string, f func() (done bool, state string)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, waitTimeout)
	defer cancel()
	for {
		done, state := f()
		if done {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("timed out waiting for %s; last state: %s", what, state)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// pods returns the pods of ns with selector that are not being deleted,
// once there are n of them and every one is Ready, sorted by name.
func (e *env) pods(t testing.TB, namespace, selector string, n int) []corev1.Pod {
	t.Helper()
	var out []corev1.Pod
	poll(e.ctx, t, fmt.Sprintf("%d Ready pods %s in %s", n, selector, namespace), func() (bool, string) {
		pl, err := e.client.CoreV1().Pods(namespace).List(e.ctx, metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			return false, err.Error()
		}
		out = out[:0]
		var state []string
		for _, p := range pl.Items {
			state = append(state, fmt.Sprintf("%s %s ready=%v deleting=%v", p.Name, p.Status.Phase, podReady(p), p.DeletionTimestamp != nil))
			if p.DeletionTimestamp == nil {
				out = append(out, p)
			}
		}
		ready := 0
		for _, p := range out {
			if podReady(p) {
				ready++
			}
		}
		return len(pl.Items) == n && ready == n, strings.Join(state, "; ")
	})
	slices.SortFunc(out, func(a, b corev1.Pod) int { return strings.Compare(a.Name, b.Name) })
	return out
}

func podReady(p corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// agentToken reads the agents' token from the Secret the chart made.
func (e *env) agentToken(t testing.TB) agentapi.Token {
	t.Helper()
	s, err := e.client.CoreV1().Secrets(ns).Get(e.ctx, "haptic-agent-token", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return agentapi.Token(strings.TrimSpace(string(s.Data["token"])))
}

// get sends GET url with Host host, without keep-alive, and returns the
// status and body.
func get(ctx context.Context, url, host string) (int, string, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, "", err
	}
	req.Host = host
	resp, err := (&http.Client{Transport: &http.Transport{DisableKeepAlives: true}}).Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// waitStatus waits until GET url (Host host) answers status.
func waitStatus(ctx context.Context, t testing.TB, url, host string, status int) {
	t.Helper()
	poll(ctx, t, fmt.Sprintf("GET %s (Host %s) to answer %d", url, host, status), func() (bool, string) {
		got, b, err := get(ctx, url, host)
		return err == nil && got == status, fmt.Sprintf("%d %q %v", got, b, err)
	})
}

// traffic is clients sending requests for one host until ended, each
// failure counted: fresh clients GET on a new connection each time;
// keep-alive clients POST a body on one connection while it lasts, which
// Go's transport never retries (it retries a GET on a reused connection
// the server closed before answering).
type traffic struct {
	sent, failed atomic.Int64
	mu           sync.Mutex
	first        []string
	last         string
	wg           sync.WaitGroup
	stop         chan struct{}
}

func startTraffic(ctx context.Context, urls []string, host string, fresh, keepAlive int) *traffic {
	tr := &traffic{stop: make(chan struct{})}
	client := func(url string, keep bool) {
		hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: !keep, MaxIdleConnsPerHost: 1}}
		defer hc.CloseIdleConnections()
		for i := 0; i < 30000; i++ { // bounded: 5 min at 10 ms
			select {
			case <-tr.stop:
				return
			case <-time.After(10 * time.Millisecond):
			}
			method, body := http.MethodGet, io.Reader(nil)
			if keep {
				method, body = http.MethodPost, io.NopCloser(strings.NewReader(`{"n":`+fmt.Sprint(i)+`}`))
			}
			req, err := http.NewRequestWithContext(ctx, method, url, body)
			if err != nil {
				tr.fail(url, 0, err)
				continue
			}
			req.Host = host
			resp, err := hc.Do(req)
			tr.sent.Add(1)
			if err != nil {
				tr.fail(url, 0, err)
				continue
			}
			_, err = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
			if err != nil || resp.StatusCode != http.StatusOK {
				tr.fail(url, resp.StatusCode, err)
			}
		}
	}
	for _, u := range urls {
		for range fresh {
			tr.wg.Go(func() { client(u, false) })
		}
		for range keepAlive {
			tr.wg.Go(func() { client(u, true) })
		}
	}
	return tr
}

func (tr *traffic) fail(url string, code int, err error) {
	tr.failed.Add(1)
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.last = fmt.Sprintf("%s %s: %d %v", time.Now().Format("15:04:05.000"), url, code, err)
	if len(tr.first) < 5 {
		tr.first = append(tr.first, tr.last)
	}
}

// end stops the clients and fails the test on any failed request.
func (tr *traffic) end(t testing.TB, what string) {
	t.Helper()
	close(tr.stop)
	tr.wg.Wait()
	t.Logf("%s: %d requests, %d failed", what, tr.sent.Load(), tr.failed.Load())
	if tr.sent.Load() == 0 {
		t.Errorf("%s: no request sent", what)
	}
	if n := tr.failed.Load(); n > 0 {
		t.Errorf("%s: %d requests failed, first %v, last %s", what, n, tr.first, tr.last)
	}
}

// objectKey names one object: resource, namespace, name.
type objectKey struct{ resource, namespace, name string }

func (k objectKey) String() string {
	if k.namespace == "" {
		return k.resource + " " + k.name
	}
	return k.resource + " " + k.namespace + "/" + k.name
}

// objects lists every object of every listable kind that is cluster-scoped
// or in namespace, except Events (the apiserver expires them; Helm does
// not own them), CustomResourceDefinitions (Helm keeps a chart's CRDs on
// uninstall, by rule) and the local APIServices (no spec.service), which
// the apiserver registers for the CRDs' groups and keeps with them.
func (e *env) objects(t testing.TB, namespace string) map[objectKey]bool {
	t.Helper()
	lists, err := e.disc.ServerPreferredResources()
	if err != nil && len(lists) == 0 {
		t.Fatalf("discovery: %v", err)
	}
	out := map[objectKey]bool{}
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			continue
		}
		for _, r := range l.APIResources {
			if strings.Contains(r.Name, "/") || !slices.Contains(r.Verbs, "list") ||
				r.Name == "events" || r.Name == "customresourcedefinitions" {
				continue
			}
			ri := e.dyn.Resource(gv.WithResource(r.Name))
			var ul *unstructured.UnstructuredList
			if r.Namespaced {
				ul, err = ri.Namespace(namespace).List(e.ctx, metav1.ListOptions{})
			} else {
				ul, err = ri.List(e.ctx, metav1.ListOptions{})
			}
			if err != nil {
				t.Logf("list %s: %v", r.Name, err)
				continue
			}
			for _, o := range ul.Items {
				if r.Name == "apiservices" {
					if svc, _, _ := unstructured.NestedMap(o.Object, "spec", "service"); svc == nil {
						continue
					}
				}
				out[objectKey{resource: r.Name + "." + gv.Group, namespace: o.GetNamespace(), name: o.GetName()}] = true
			}
		}
	}
	return out
}
