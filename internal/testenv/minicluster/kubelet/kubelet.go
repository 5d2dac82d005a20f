package kubelet

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// Config configures [New]. Client, Dir, Images, ServingCertPEM and
// ServingKeyPEM are required.
type Config struct {
	Client kubernetes.Interface
	// Dir holds one directory per pod: volumes and container logs.
	Dir string
	// Images maps image prefixes to local binaries.
	Images Images
	// ServingCertPEM/ServingKeyPEM serve /containerLogs over HTTPS.
	ServingCertPEM, ServingKeyPEM []byte
	// NodeName; empty means "proc-node-1".
	NodeName string
	// LogsAddr is the HTTPS listen address; empty means 127.0.0.1:10250.
	LogsAddr string
	// PodCIDR; the zero value means 198.18.0.0/15.
	PodCIDR netip.Prefix
	// Interval between pod syncs; zero means 200 ms.
	Interval time.Duration
	// LeaseInterval between Lease renewals; zero means 10 s.
	LeaseInterval time.Duration
	// Log; nil discards.
	Log *slog.Logger
	// Now; nil means time.Now.
	Now func() time.Time
	// APIServer is the API server's address (host:port) in the node's
	// namespace. When set, pods run in-cluster: every container gets
	// KUBERNETES_SERVICE_HOST and _PORT, projected volumes (the
	// service-account token, the cluster CA, the namespace) are
	// materialised and, under /run, mounted for real, and a service
	// proxy serves every Service's ClusterIP (see serviceProxy), with
	// default/kubernetes going to APIServer. Empty: none of that.
	APIServer string
}

// Kubelet runs the pods bound to one node. Create it with [New] and run it
// with [Kubelet.Run]; other methods are safe to call concurrently with Run.
type Kubelet struct {
	cfg      Config
	pool     *ipPool // used only by the Run goroutine
	logsPort int

	mu       sync.Mutex // guards pods, failures
	pods     map[types.UID]*runningPod
	failures map[types.UID]time.Time // last failed start, for backoff
	written  map[types.UID]string    // statusKey last written; Run goroutine only

	// terms are the pods being stopped gracefully (see startTermination)
	// and termWG counts their goroutines; Run goroutine only.
	terms  map[types.UID]*termination
	termWG sync.WaitGroup
}

// New checks cfg and applies defaults.
func New(cfg Config) (*Kubelet, error) {
	switch {
	case cfg.Client == nil:
		return nil, errors.New("kubelet: Config.Client is required")
	case cfg.Dir == "":
		return nil, errors.New("kubelet: Config.Dir is required")
	case len(cfg.Images) == 0:
		return nil, errors.New("kubelet: Config.Images is required")
	case len(cfg.ServingCertPEM) == 0 || len(cfg.ServingKeyPEM) == 0:
		return nil, errors.New("kubelet: Config.ServingCertPEM and ServingKeyPEM are required")
	}
	if cfg.NodeName == "" {
		cfg.NodeName = "proc-node-1"
	}
	if cfg.LogsAddr == "" {
		cfg.LogsAddr = "127.0.0.1:10250"
	}
	if !cfg.PodCIDR.IsValid() {
		cfg.PodCIDR = netip.MustParsePrefix("198.18.0.0/15")
	}
	if cfg.Interval == 0 {
		cfg.Interval = 200 * time.Millisecond
	}
	if cfg.LeaseInterval == 0 {
		cfg.LeaseInterval = 10 * time.Second
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	pool, err := newIPPool(cfg.PodCIDR)
	if err != nil {
		return nil, err
	}
	_, port, err := net.SplitHostPort(cfg.LogsAddr)
	if err != nil {
		return nil, fmt.Errorf("kubelet: Config.LogsAddr: %w", err)
	}
	p, err := strconv.Atoi(port)
	if err != nil {
		return nil, fmt.Errorf("kubelet: Config.LogsAddr port: %w", err)
	}
	return &Kubelet{cfg: cfg, pool: pool, logsPort: p, pods: map[types.UID]*runningPod{},
		failures: map[types.UID]time.Time{}, written: map[types.UID]string{}, terms: map[types.UID]*termination{}}, nil
}

// NodeName is the name of the Node this kubelet registers.
func (k *Kubelet) NodeName() string { return k.cfg.NodeName }

// Run registers the node, serves container logs, renews the Lease and syncs
// pods until ctx ends; then it stops every pod it started and returns nil.
// Setup errors are returned at once.
func (k *Kubelet) Run(ctx context.Context) error {
	if err := os.MkdirAll(k.cfg.Dir, 0o755); err != nil {
		return fmt.Errorf("kubelet: %w", err)
	}
	if err := enableForwarding(); err != nil {
		return fmt.Errorf("kubelet: %w", err)
	}
	cert, err := tls.X509KeyPair(k.cfg.ServingCertPEM, k.cfg.ServingKeyPEM)
	if err != nil {
		return fmt.Errorf("kubelet: serving certificate: %w", err)
	}
	ln, err := net.Listen("tcp", k.cfg.LogsAddr)
	if err != nil {
		return fmt.Errorf("kubelet: listen %s: %w", k.cfg.LogsAddr, err)
	}
	srv := &http.Server{
		Handler:           logsHandler(k.logPath, k.cfg.Now),
		TLSConfig:         &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12},
		ReadHeaderTimeout: 10 * time.Second,
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := srv.ServeTLS(ln, "", ""); err != nil && !errors.Is(err, http.ErrServerClosed) {
			k.cfg.Log.Warn("logs server stopped", "err", err)
		}
	}()
	defer func() {
		_ = srv.Close()
		wg.Wait()
	}()
	if err := k.registerNode(ctx); err != nil {
		return err
	}
	// kube-node-lease may not exist yet on a fresh cluster; the loop retries.
	if err := k.renewLease(ctx); err != nil {
		k.cfg.Log.Warn("first lease renewal failed", "err", err)
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		k.leaseLoop(ctx)
	}()
	if k.cfg.APIServer != "" {
		sp := &serviceProxy{client: k.cfg.Client, apiServer: k.cfg.APIServer, log: k.cfg.Log}
		wg.Go(func() { sp.run(ctx) })
	}
	defer k.stopAll(context.WithoutCancel(ctx))
	t := time.NewTicker(k.cfg.Interval)
	defer t.Stop()
	for {
		if err := k.sync(ctx); err != nil && ctx.Err() == nil {
			k.cfg.Log.Warn("pod sync failed", "err", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// logPath finds the current log file of a container.
func (k *Kubelet) logPath(ns, pod, name string) (string, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, rp := range k.pods {
		if rp.ns != ns || rp.name != pod {
			continue
		}
		for _, c := range append(append([]*container(nil), rp.inits...), rp.containers...) {
			if c.name == name {
				return c.logPath, true
			}
		}
	}
	return "", false
}

// sync runs one pass over all pods.
func (k *Kubelet) sync(ctx context.Context) error {
	list, err := k.cfg.Client.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("list pods: %w", err)
	}
	seen := map[types.UID]bool{}
	var errs []error
	for i := range list.Items {
		pod := &list.Items[i]
		if pod.Spec.NodeName == "" {
			if pod.DeletionTimestamp == nil {
				errs = append(errs, k.bind(ctx, pod))
			}
			continue
		}
		if pod.Spec.NodeName != k.cfg.NodeName {
			continue
		}
		seen[pod.UID] = true
		errs = append(errs, k.syncPod(ctx, pod))
	}
	k.mu.Lock()
	var gone []*runningPod
	for uid, rp := range k.pods {
		if !seen[uid] {
			gone = append(gone, rp)
			delete(k.pods, uid)
			delete(k.written, uid)
		}
	}
	for uid := range k.failures {
		if !seen[uid] {
			delete(k.failures, uid)
		}
	}
	k.mu.Unlock()
	for uid := range k.terms {
		if !seen[uid] {
			delete(k.terms, uid)
		}
	}
	for _, rp := range gone {
		k.stopPod(ctx, rp)
	}
	return errors.Join(errs...)
}

func (k *Kubelet) bind(ctx context.Context, pod *corev1.Pod) error {
	err := k.cfg.Client.CoreV1().Pods(pod.Namespace).Bind(ctx, &corev1.Binding{
		ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace, UID: pod.UID},
		Target:     corev1.ObjectReference{Kind: "Node", Name: k.cfg.NodeName},
	}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsConflict(err) && !apierrors.IsNotFound(err) {
		return fmt.Errorf("bind pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	return nil
}

func (k *Kubelet) syncPod(ctx context.Context, pod *corev1.Pod) error {
	k.mu.Lock()
	rp := k.pods[pod.UID]
	lastFail := k.failures[pod.UID]
	k.mu.Unlock()
	log := k.cfg.Log.With("pod", pod.Namespace+"/"+pod.Name)

	if pod.DeletionTimestamp != nil {
		if rp != nil {
			// A graceful stop first: preStop hooks, SIGTERM, the grace
			// period; the pod is deleted once every container exited.
			term := k.terms[pod.UID]
			if term == nil {
				k.terms[pod.UID] = k.startTermination(ctx, &k.termWG, pod, rp)
				return nil
			}
			select {
			case <-term.done:
			default:
				return nil
			}
			delete(k.terms, pod.UID)
			k.stopPod(ctx, rp)
			k.mu.Lock()
			delete(k.pods, pod.UID)
			delete(k.written, pod.UID)
			k.mu.Unlock()
		}
		err := k.cfg.Client.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{
			GracePeriodSeconds: ptr(int64(0)),
			Preconditions:      &metav1.Preconditions{UID: &pod.UID},
		})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return fmt.Errorf("delete pod %s/%s: %w", pod.Namespace, pod.Name, err)
		}
		log.Debug("pod deleted")
		return nil
	}
	if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		return nil
	}
	if rp == nil {
		if !lastFail.IsZero() && k.cfg.Now().Sub(lastFail) < time.Second {
			return nil
		}
		var err error
		rp, err = k.startPod(ctx, pod)
		if err != nil {
			k.mu.Lock()
			k.failures[pod.UID] = k.cfg.Now()
			k.mu.Unlock()
			k.markPending(ctx, pod, err)
			return fmt.Errorf("start pod %s/%s: %w", pod.Namespace, pod.Name, err)
		}
		k.mu.Lock()
		k.pods[pod.UID] = rp
		delete(k.failures, pod.UID)
		k.mu.Unlock()
		log.Debug("pod started", "ip", rp.net.ip)
	}
	if err := rp.advance(k.cfg.Now); err != nil {
		// A process of the pod could not start (the containers, after the
		// init containers): start the pod anew after the backoff.
		k.stopPod(ctx, rp)
		k.mu.Lock()
		delete(k.pods, pod.UID)
		delete(k.written, pod.UID)
		k.failures[pod.UID] = k.cfg.Now()
		k.mu.Unlock()
		k.markPending(ctx, pod, err)
		return fmt.Errorf("start pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	if err := rp.restartExited(k.cfg.Now); err != nil {
		log.Warn("container restart failed", "err", err)
	}
	for _, c := range rp.containers {
		c.probe(rp.net.ip)
	}
	st := podStatus(pod.Status, rp.view())
	key := statusKey(st)
	if k.written[pod.UID] == key {
		return nil
	}
	upd := pod.DeepCopy()
	upd.Status = st
	if _, err := k.cfg.Client.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, upd, metav1.UpdateOptions{}); err != nil {
		if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
			return nil // next pass
		}
		return fmt.Errorf("update status of pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	k.written[pod.UID] = key
	return nil
}

// markPending records why a pod could not start, once per distinct reason.
func (k *Kubelet) markPending(ctx context.Context, pod *corev1.Pod, cause error) {
	msg := cause.Error()
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.ContainersReady && c.Message == msg {
			return
		}
	}
	upd := pod.DeepCopy()
	upd.Status.Phase = corev1.PodPending
	upd.Status.Conditions = []corev1.PodCondition{
		{Type: corev1.PodScheduled, Status: corev1.ConditionTrue},
		{Type: corev1.ContainersReady, Status: corev1.ConditionFalse, Reason: "ProcessStartFailed", Message: msg},
		{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "ProcessStartFailed", Message: msg},
	}
	if _, err := k.cfg.Client.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, upd, metav1.UpdateOptions{}); err != nil && ctx.Err() == nil {
		k.cfg.Log.Debug("mark pending failed", "pod", pod.Namespace+"/"+pod.Name, "err", err)
	}
}

// stopAll stops every pod (on shutdown).
func (k *Kubelet) stopAll(ctx context.Context) {
	k.mu.Lock()
	pods := k.pods
	k.pods = map[types.UID]*runningPod{}
	k.mu.Unlock()
	for _, rp := range pods {
		k.stopPod(ctx, rp)
	}
	// ctx of Run has ended: the graceful stops cut their hooks short and
	// find their processes gone.
	k.termWG.Wait()
	k.terms = map[types.UID]*termination{}
}
