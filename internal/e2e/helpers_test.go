package e2e_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/haptic-io/haptic/agentapi"
	"github.com/haptic-io/haptic/deployplan"
	"github.com/haptic-io/haptic/internal/haproxytest"
	"github.com/haptic-io/haptic/internal/testenv/minicluster"
	"github.com/haptic-io/haptic/internal/testenv/minicluster/kubelet"
	"github.com/haptic-io/haptic/libraries"
	"github.com/haptic-io/haptic/renderplan"
	"github.com/haptic-io/haptic/store"
	"github.com/haptic-io/haptic/templating"
)

// haproxyLabel selects the pods of testdata/haproxy-deployment.yaml.
const haproxyLabel = "app.kubernetes.io/name=haptic-haproxy"

// waitTimeout bounds every wait for the cluster to converge.
const waitTimeout = 2 * time.Minute

// cluster is a mini cluster whose process kubelet runs HAPTIC's images
// (kubelet.HAPTICImages: HAProxy 3.4 and the haptic binary built from this
// module; haproxyImage(Series) runs the HAProxy of that series) and the
// conformance backend echo-basic (kubelet.EchoBasicImage).
type cluster struct {
	*minicluster.Cluster
	Bins    minicluster.Binaries
	Client  kubernetes.Interface
	Dynamic dynamic.Interface
	Kubelet *kubelet.Kubelet
	// HAProxy and Haptic are the binaries the images map to; HAProxy is
	// the one of Series.
	HAProxy, Haptic string
	// Series is the HAProxy series the pods of deployHAProxy run.
	Series string
}

// haproxyImage is the HAProxy image the pods' manifest names for series:
// the cluster's kubelet maps that tag to the series' binary
// (.cache/haproxy/<series>).
func haproxyImage(series string) string { return kubelet.HAProxyImage + ":" + series }

// startCluster starts a cluster and its kubelet for the test, stopping
// both when it ends. It skips (or fails under CI=true) like
// minicluster.StartT when the sandbox, the cluster binaries or HAProxy 3.4
// are missing.
func startCluster(t testing.TB) *cluster { return startClusterOn(t, "3.4") }

// startClusterOn is startCluster with the HAProxy pods on series (3.4 is
// needed too: every other tag of the image maps to it).
func startClusterOn(t testing.TB, series string) *cluster {
	t.Helper()
	minicluster.RequireT(t)
	haproxy := haproxytest.Binary(t, "3.4")
	pods := haproxytest.Binary(t, series)
	haptic := hapticBinary(t)
	mc, bins := minicluster.StartT(t)
	cs, err := kubernetes.NewForConfig(mc.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(mc.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	images := kubelet.HAPTICImages(haproxy, haptic)
	images[haproxyImage(series)] = kubelet.Image{Binary: pods}
	maps.Copy(images, kubelet.ConformanceImages(bins.EchoBasic))
	kl := kubelet.StartT(t, kubelet.Config{
		Client:         cs,
		Dir:            filepath.Join(t.TempDir(), "pods"),
		Images:         images,
		ServingCertPEM: mc.PKI.Kubelet.CertPEM,
		ServingKeyPEM:  mc.PKI.Kubelet.KeyPEM,
	})
	return &cluster{Cluster: mc, Bins: bins, Client: cs, Dynamic: dyn, Kubelet: kl, HAProxy: pods, Haptic: haptic, Series: series}
}

// hapticBuild is the haptic binary the package's tests share, built once
// by hapticBinary and removed by TestMain.
var hapticBuild struct {
	once sync.Once
	dir  string
	path string
	err  error
}

// hapticBinary builds ./cmd/haptic and ./cmd/haptic-agent from the module
// root into one directory once per test binary and returns haptic's path
// (the pods' agents run the haptic-agent beside it). HAPTIC_E2E_HAPTIC
// names a haptic binary to use instead, with its haptic-agent beside it
// (a build of another revision, to compare two in one run).
func hapticBinary(t testing.TB) string {
	t.Helper()
	hapticBuild.once.Do(func() {
		if p := os.Getenv("HAPTIC_E2E_HAPTIC"); p != "" {
			hapticBuild.path, hapticBuild.err = filepath.Abs(p)
			return
		}
		root, err := moduleRoot()
		if err != nil {
			hapticBuild.err = err
			return
		}
		if hapticBuild.dir, err = os.MkdirTemp("", "haptic-e2e-"); err != nil {
			hapticBuild.err = err
			return
		}
		hapticBuild.path = filepath.Join(hapticBuild.dir, "haptic")
		cmd := exec.Command("go", "build", "-o", hapticBuild.dir+"/", "./cmd/haptic", "./cmd/haptic-agent")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			hapticBuild.err = fmt.Errorf("go build ./cmd/haptic ./cmd/haptic-agent: %w\n%s", err, out)
		}
	})
	if hapticBuild.err != nil {
		t.Fatal(hapticBuild.err)
	}
	return hapticBuild.path
}

func removeHapticBinary() {
	if hapticBuild.dir != "" {
		_ = os.RemoveAll(hapticBuild.dir)
	}
}

// moduleRoot walks up from the working directory to go.mod.
func moduleRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no go.mod above %s", wd)
		}
	}
}

// haproxyDeployment is HAPTIC's HAProxy Deployment in one namespace.
type haproxyDeployment struct {
	Namespace string
	// Token is the agents' bearer token (the Secret's).
	Token agentapi.Token
	// Pods are the Ready pods, sorted by name, as last waited for.
	Pods []corev1.Pod
}

// agent is a client of pod's agent, at podIP:5555, with the token.
func (d *haproxyDeployment) agent(pod corev1.Pod) *agentapi.Client {
	return &agentapi.Client{BaseURL: "http://" + pod.Status.PodIP + ":5555", Token: d.Token}
}

// deployHAProxy creates namespace ns, the token Secret and the HAProxy
// Deployment of testdata/haproxy-deployment.yaml with replicas pods on the
// cluster's HAProxy series, and waits until that many are Ready.
func (c *cluster) deployHAProxy(ctx context.Context, t testing.TB, ns string, replicas int) *haproxyDeployment {
	t.Helper()
	c.createNamespace(ctx, t, ns)
	tok := newToken(t)
	manifest, err := os.ReadFile(filepath.Join("testdata", "haproxy-deployment.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	objs, err := minicluster.SplitManifests([]byte(strings.NewReplacer(
		"__NAMESPACE__", ns,
		"__REPLICAS__", strconv.Itoa(replicas),
		"__TOKEN__", string(tok),
		"__HAPTIC_IMAGE__", kubelet.HAPTICImage+":e2e",
		"__HAPROXY_IMAGE__", haproxyImage(c.Series),
	).Replace(string(manifest))))
	if err != nil {
		t.Fatal(err)
	}
	if err := minicluster.Apply(ctx, c.RESTConfig(), objs); err != nil {
		t.Fatal(err)
	}
	d := &haproxyDeployment{Namespace: ns, Token: tok}
	d.Pods = c.waitHAProxyPods(ctx, t, ns, replicas)
	return d
}

// waitHAProxyPods waits until ns holds exactly n HAProxy pods, every one
// Ready and none of them terminating or one of gone, and returns them
// sorted by name. On a timeout it logs the pods' container logs.
func (c *cluster) waitHAProxyPods(ctx context.Context, t testing.TB, ns string, n int, gone ...types.UID) []corev1.Pod {
	t.Helper()
	var pods []corev1.Pod
	ok := poll(ctx, t, fmt.Sprintf("%d Ready HAProxy pods in %s", n, ns), func() (bool, string) {
		pl, err := c.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: haproxyLabel})
		if err != nil {
			return false, err.Error()
		}
		pods = pl.Items
		var state []string
		ready := 0
		for _, p := range pods {
			if podReady(p) && p.DeletionTimestamp == nil && !slices.Contains(gone, p.UID) {
				ready++
			}
			state = append(state, fmt.Sprintf("%s %s ready=%v", p.Name, p.Status.Phase, podReady(p)))
		}
		return ready == n && len(pods) == n, strings.Join(state, "; ")
	})
	if !ok {
		c.logPods(ctx, t, ns)
		t.FailNow()
	}
	slices.SortFunc(pods, func(a, b corev1.Pod) int { return strings.Compare(a.Name, b.Name) })
	return pods
}

// logPods logs every container's log of the pods in ns, for a failure.
func (c *cluster) logPods(ctx context.Context, t testing.TB, ns string) {
	t.Helper()
	pl, err := c.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Logf("list pods of %s: %v", ns, err)
		return
	}
	for _, p := range pl.Items {
		t.Logf("pod %s: phase %s, conditions %+v", p.Name, p.Status.Phase, p.Status.Conditions)
		for _, ctr := range append(append([]corev1.Container(nil), p.Spec.InitContainers...), p.Spec.Containers...) {
			b, err := c.Client.CoreV1().Pods(ns).GetLogs(p.Name, &corev1.PodLogOptions{Container: ctr.Name}).Do(ctx).Raw()
			t.Logf("log of %s/%s (err %v):\n%s", p.Name, ctr.Name, err, b)
		}
	}
}

func (c *cluster) createNamespace(ctx context.Context, t testing.TB, ns string) {
	t.Helper()
	if _, err := c.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create namespace %s: %v", ns, err)
	}
}

// newToken returns a random agent token.
func newToken(t testing.TB) agentapi.Token {
	t.Helper()
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	tok, err := agentapi.ParseToken(hex.EncodeToString(b))
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// deployEcho creates a one-pod echo-basic Deployment and a Service name
// (port 80 to echo-basic's 3000) in ns, and waits until the Service's
// EndpointSlices list the pod, Ready. It returns the pod.
func (c *cluster) deployEcho(ctx context.Context, t testing.TB, ns, name string) corev1.Pod {
	t.Helper()
	objs, err := minicluster.SplitManifests([]byte(strings.NewReplacer("__NAMESPACE__", ns, "__NAME__", name).Replace(`
apiVersion: apps/v1
kind: Deployment
metadata: {name: __NAME__, namespace: __NAMESPACE__}
spec:
  replicas: 1
  selector: {matchLabels: {app: __NAME__}}
  template:
    metadata: {labels: {app: __NAME__}}
    spec:
      containers:
        - name: echo
          image: ` + kubelet.EchoBasicImage + `:v1.6.3
          env:
            - {name: POD_NAME, valueFrom: {fieldRef: {fieldPath: metadata.name}}}
            - {name: NAMESPACE, valueFrom: {fieldRef: {fieldPath: metadata.namespace}}}
          ports: [{containerPort: 3000}]
---
apiVersion: v1
kind: Service
metadata: {name: __NAME__, namespace: __NAMESPACE__}
spec:
  selector: {app: __NAME__}
  ports: [{name: http, port: 80, targetPort: 3000}]
`)))
	if err != nil {
		t.Fatal(err)
	}
	if err := minicluster.Apply(ctx, c.RESTConfig(), objs); err != nil {
		t.Fatal(err)
	}
	var pod corev1.Pod
	ok := poll(ctx, t, "echo pod "+ns+"/"+name+" Ready in its Service's endpoints", func() (bool, string) {
		pl, err := c.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=" + name})
		if err != nil || len(pl.Items) != 1 || !podReady(pl.Items[0]) {
			return false, fmt.Sprintf("pods %v, %v", podNames(pl), err)
		}
		pod = pl.Items[0]
		sl, err := c.Client.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{LabelSelector: "kubernetes.io/service-name=" + name})
		if err != nil {
			return false, err.Error()
		}
		for _, s := range sl.Items {
			for _, e := range s.Endpoints {
				if e.Conditions.Ready != nil && *e.Conditions.Ready && slices.Contains(e.Addresses, pod.Status.PodIP) {
					return true, ""
				}
			}
		}
		return false, fmt.Sprintf("no ready endpoint %s in %d slices", pod.Status.PodIP, len(sl.Items))
	})
	if !ok {
		c.logPods(ctx, t, ns)
		t.FailNow()
	}
	return pod
}

// podExtraContext is the extraContext of the stock base library for the
// pods of testdata/haproxy-deployment.yaml: HTTP on :80 of every address
// (the bootstrap's bind), no HTTPS, and the stats socket the agent dials
// (relative to HAProxy's working directory, the tree).
func podExtraContext() map[string]any {
	return map[string]any{"httpAddress": "0.0.0.0", "httpPort": int64(80), "httpsPort": int64(0), "statsSocket": "stats.sock"}
}

// renderStock renders the stock base and ingress libraries over what the
// apiserver holds in ns of every resource they watch (Ingresses, Services,
// EndpointSlices, Secrets), with podExtraContext. A render problem fails
// the test.
func (c *cluster) renderStock(ctx context.Context, t testing.TB, ns string) *renderplan.Output {
	t.Helper()
	cfgs, err := libraries.Load("base", "ingress")
	if err != nil {
		t.Fatal(err)
	}
	cfg := templating.Merge(cfgs[0], cfgs[1:]...)
	st, err := store.NewMemory(cfg.WatchedResources)
	if err != nil {
		t.Fatal(err)
	}
	for alias, wr := range cfg.WatchedResources {
		gv, err := schema.ParseGroupVersion(wr.APIVersion)
		if err != nil {
			t.Fatal(err)
		}
		l, err := c.Dynamic.Resource(gv.WithResource(wr.Resource)).Namespace(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatalf("list %s in %s: %v", wr.Resource, ns, err)
		}
		for _, o := range l.Items {
			if err := st.Add(alias, o.Object); err != nil {
				t.Fatalf("store %s %s: %v", wr.Resource, o.GetName(), err)
			}
		}
	}
	engine, err := templating.Compile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	out, problems, err := engine.Render(ctx, st.Snapshot(), templating.RenderOptions{ExtraContext: podExtraContext()})
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	if len(problems) > 0 {
		t.Fatalf("render problems: %v", problems)
	}
	return out
}

// applyPlan brings the pod behind cl to out as the controller's dispatch
// does: its state is the baseline (HAProxy version and op kinds; the plan
// it runs is unknown to this test, so a pod that runs one gets the full
// state and a reload), deployplan.Diff decides, and every file's body
// travels. fence must be at least the agent's. It returns the ACK and
// fails the test on a NACK.
func applyPlan(ctx context.Context, t testing.TB, cl *agentapi.Client, out *renderplan.Output, fence uint64) *agentapi.ApplyResult {
	t.Helper()
	st, err := cl.State(ctx)
	if err != nil {
		t.Fatalf("agent %s state: %v", cl.BaseURL, err)
	}
	dec := deployplan.Diff(out.Plan, deployplan.Baseline{HAProxyVersion: st.HAProxyVersion, AgentOps: st.OpKinds, PendingDeletes: st.PendingDeletes})
	bodies := make(map[string][]byte, len(out.Files))
	for _, f := range out.Files {
		bodies[f.Path] = f.Body
	}
	res, err := cl.Apply(ctx, &agentapi.ApplyRequest{
		PlanID:         out.ID(),
		ExpectedPlanID: st.AppliedPlanID,
		Fence:          fence,
		Mode:           agentapi.ModeAuto,
		Verdict:        dec.Verdict,
		Files:          dec.Files,
		Ops:            dec.Ops,
		Bodies:         bodies,
	})
	if err != nil {
		var nack *agentapi.NackError
		if errors.As(err, &nack) {
			t.Fatalf("agent %s refused plan %s at %s: %s", cl.BaseURL, out.ID(), nack.Stage, nack.Message)
		}
		t.Fatalf("apply plan %s to %s: %v", out.ID(), cl.BaseURL, err)
	}
	return res
}

// get sends GET url with Host host (none when empty), without keep-alive,
// and returns the status and body.
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

// waitStatus waits until GET url (Host host) answers status and returns
// the body; it fails the test on a timeout.
func waitStatus(ctx context.Context, t testing.TB, url, host string, status int) string {
	t.Helper()
	var body string
	if !poll(ctx, t, fmt.Sprintf("GET %s (Host %q) to answer %d", url, host, status), func() (bool, string) {
		got, b, err := get(ctx, url, host)
		body = b
		return err == nil && got == status, fmt.Sprintf("%d %q %v", got, b, err)
	}) {
		t.FailNow()
	}
	return body
}

// poll calls f every 200 ms until it reports done, for at most
// waitTimeout; on a timeout it reports an error naming what and f's last
// state, and returns false.
func poll(ctx context.Context, t testing.TB, what string, f func() (done bool, state string)) bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, waitTimeout)
	defer cancel()
	for {
		done, state := f()
		if done {
			return true
		}
		select {
		case <-ctx.Done():
			t.Errorf("timed out waiting for %s; last state: %s", what, state)
			return false
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func podReady(p corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func podNames(pl *corev1.PodList) []string {
	if pl == nil {
		return nil
	}
	var names []string
	for _, p := range pl.Items {
		names = append(names, p.Name+"("+string(p.Status.Phase)+")")
	}
	return names
}
