package cluster

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strconv"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/haptic-io/haptic/agentapi"
	"github.com/haptic-io/haptic/internal/controller"
)

// DefaultAgentPort is where an HAProxy pod's agent listens.
const DefaultAgentPort = 5555

// PodsConfig configures [Pods].
type PodsConfig struct {
	// Client lists and watches the pods. Required.
	Client kubernetes.Interface
	// Namespace holds the HAProxy pods. Required.
	Namespace string
	// Selector picks them. Required (an empty selector would pick every
	// pod of the namespace).
	Selector labels.Selector
	// Port is the agents' port; zero means [DefaultAgentPort].
	Port int
	// Token returns the bearer token the agents expect, asked for each
	// new client (a rotated Secret reaches pods as they are re-created).
	Token func() agentapi.Token
	// Scheme is "http" or "https"; empty means "http".
	Scheme string
	// Changed is called when the set of pods or an address changed (the
	// loop's Trigger); nil ignores.
	Changed func()
}

// Pods discovers the HAProxy pods and hands the loop one
// [controller.Target] per pod that has an address and is not being
// deleted. A pod that goes away is forgotten; a pod re-created under the
// same name (a new UID) or with a new address gets a new client, and its
// agent's state tells the loop it needs the full state.
type Pods struct {
	cfg PodsConfig

	mu      sync.Mutex
	clients map[string]podClient // guarded by mu; by pod name
	lister  cache.Indexer        // set by Run before synced closes
	synced  chan struct{}
}

type podClient struct {
	uid, ip string
	client  *agentapi.Client
}

// NewPods checks cfg and returns pod discovery.
func NewPods(cfg PodsConfig) (*Pods, error) {
	switch {
	case cfg.Client == nil:
		return nil, fmt.Errorf("pod discovery: missing Client")
	case cfg.Namespace == "":
		return nil, fmt.Errorf("pod discovery: missing Namespace")
	case cfg.Selector == nil || cfg.Selector.Empty():
		return nil, fmt.Errorf("pod discovery: missing Selector")
	case cfg.Port < 0 || cfg.Port > 65535:
		return nil, fmt.Errorf("pod discovery: Port %d out of range", cfg.Port)
	}
	if cfg.Port == 0 {
		cfg.Port = DefaultAgentPort
	}
	if cfg.Scheme == "" {
		cfg.Scheme = "http"
	}
	if cfg.Token == nil {
		cfg.Token = func() agentapi.Token { return "" }
	}
	if cfg.Changed == nil {
		cfg.Changed = func() {}
	}
	return &Pods{cfg: cfg, clients: map[string]podClient{}, synced: make(chan struct{})}, nil
}

// Run watches the pods until ctx ends.
func (p *Pods) Run(ctx context.Context) error {
	f := informers.NewSharedInformerFactoryWithOptions(p.cfg.Client, 0,
		informers.WithNamespace(p.cfg.Namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = p.cfg.Selector.String() }))
	inf := f.Core().V1().Pods().Informer()
	notify := func(any) { p.cfg.Changed() }
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    notify,
		UpdateFunc: func(_, o any) { notify(o) },
		DeleteFunc: notify,
	}); err != nil {
		return err
	}
	p.mu.Lock()
	p.lister = inf.GetIndexer()
	p.mu.Unlock()
	f.Start(ctx.Done())
	defer f.Shutdown()
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		return ctx.Err()
	}
	close(p.synced)
	p.cfg.Changed()
	<-ctx.Done()
	return ctx.Err()
}

// Synced is closed once the first listing of the pods is known.
func (p *Pods) Synced() <-chan struct{} { return p.synced }

// Targets returns the pods to deploy to, by name; it is the loop's
// [controller.Config].Targets.
func (p *Pods) Targets() []controller.Target {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.lister == nil {
		return nil
	}
	var out []controller.Target
	seen := map[string]bool{}
	for _, o := range p.lister.List() {
		pod, ok := o.(*corev1.Pod)
		if !ok || !servable(pod) {
			continue
		}
		c, ok := p.clients[pod.Name]
		if !ok || c.uid != string(pod.UID) || c.ip != pod.Status.PodIP {
			c = podClient{uid: string(pod.UID), ip: pod.Status.PodIP, client: &agentapi.Client{
				BaseURL: p.cfg.Scheme + "://" + net.JoinHostPort(pod.Status.PodIP, strconv.Itoa(p.cfg.Port)),
				Token:   p.cfg.Token(),
			}}
			p.clients[pod.Name] = c
		}
		seen[pod.Name] = true
		out = append(out, controller.Target{Name: pod.Name, Agent: c.client})
	}
	for name := range p.clients {
		if !seen[name] {
			delete(p.clients, name)
		}
	}
	slices.SortFunc(out, func(a, b controller.Target) int {
		switch {
		case a.Name < b.Name:
			return -1
		case a.Name > b.Name:
			return 1
		}
		return 0
	})
	return out
}

// Addresses returns the IPs of the servable pods, sorted (for Ingress
// status).
func (p *Pods) Addresses() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.lister == nil {
		return nil
	}
	var ips []string
	for _, o := range p.lister.List() {
		if pod, ok := o.(*corev1.Pod); ok && servable(pod) {
			ips = append(ips, pod.Status.PodIP)
		}
	}
	slices.Sort(ips)
	return slices.Compact(ips)
}

// IPs returns the address of each servable pod, by name.
func (p *Pods) IPs() map[string]string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[string]string{}
	if p.lister == nil {
		return out
	}
	for _, o := range p.lister.List() {
		if pod, ok := o.(*corev1.Pod); ok && servable(pod) {
			out[pod.Name] = pod.Status.PodIP
		}
	}
	return out
}

// servable: the pod has an address, runs, and is not being deleted. Its
// agent's readiness is not asked: a fresh pod's agent is what the first
// apply makes ready.
func servable(pod *corev1.Pod) bool {
	return pod.Status.PodIP != "" && pod.DeletionTimestamp == nil && pod.Status.Phase == corev1.PodRunning
}

// Ready returns the IP of each servable pod whose Ready condition is
// true, by name (the pods a Gateway's addresses and Programmed condition
// count).
func (p *Pods) Ready() map[string]string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[string]string{}
	if p.lister == nil {
		return out
	}
	for _, o := range p.lister.List() {
		if pod, ok := o.(*corev1.Pod); ok && servable(pod) && podReady(pod) {
			out[pod.Name] = pod.Status.PodIP
		}
	}
	return out
}

func podReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
