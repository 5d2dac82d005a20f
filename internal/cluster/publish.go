package cluster

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/events"

	"github.com/haptic-io/haptic/api/v1alpha1"
	"github.com/haptic-io/haptic/templating"
)

// maxEventsPerRound bounds the Events one publishing round sends: a
// config that breaks thousands of objects must not flood the apiserver.
const maxEventsPerRound = 20

var ingressGVR = schema.GroupVersionResource{Group: "networking.k8s.io", Version: "v1", Resource: "ingresses"}

// publisher writes, while leading, what the controller tells the
// cluster besides the config's conditions: an Event on each object a
// render left out (once per problem), the Ingresses' status.loadBalancer
// (the HAProxy pods' addresses) and the HAProxyCfg output object
// (throttled by configPublishInterval).
type publisher struct {
	kube            kubernetes.Interface
	dyn             dynamic.Interface
	namespace, name string // the config's
	log             *slog.Logger
	m               *publishMetrics

	once     sync.Once
	recorder events.EventRecorder
	stop     func()

	// Owned by the status goroutine:
	reported  map[string]bool // problems already sent as Events
	published time.Time       // last HAProxyCfg write
	lastPlan  string
	lbWritten map[string]string // Ingress ns/name → addresses written
}

type publishMetrics struct {
	published, dropped prometheus.Counter
}

func newPublishMetrics(reg prometheus.Registerer) *publishMetrics {
	m := &publishMetrics{
		published: prometheus.NewCounter(prometheus.CounterOpts{Name: "haptic_events_published_total", Help: "Kubernetes Events sent about objects a render left out."}),
		dropped:   prometheus.NewCounter(prometheus.CounterOpts{Name: "haptic_events_dropped_total", Help: "Events not sent because a round had sent its maximum."}),
	}
	reg.MustRegister(m.published, m.dropped)
	return m
}

func (p *publisher) events() events.EventRecorder {
	p.once.Do(func() {
		b := events.NewBroadcaster(&events.EventSinkImpl{Interface: p.kube.EventsV1()})
		stopCh := make(chan struct{})
		b.StartRecordingToSink(stopCh)
		p.recorder = b.NewRecorder(scheme.Scheme, FieldManager)
		p.stop = func() { close(stopCh); b.Shutdown() }
	})
	return p.recorder
}

func (p *publisher) close() {
	if p.stop != nil {
		p.stop()
	}
}

// round publishes the pipeline's state once.
func (p *publisher) round(ctx context.Context, pipe *pipeline) {
	st := pipe.loop.Status()
	if !st.Initialized {
		return
	}
	p.problemEvents(st.Problems)
	p.ingressStatus(ctx, pipe)
	p.output(ctx, pipe, st.PlanID, st.Problems, st.Pods)
}

func problemKey(pr templating.Problem) string {
	return pr.Ref.Kind + "\x00" + pr.Ref.Namespace + "\x00" + pr.Ref.Name + "\x00" + pr.Reason + "\x00" + pr.Message
}

// problemEvents sends a Warning Event on the object of each problem not
// reported yet; a problem that went away may be reported again later.
func (p *publisher) problemEvents(problems []templating.Problem) {
	now := make(map[string]bool, len(problems))
	sent := 0
	for _, pr := range problems {
		if pr.Ref.Kind == "" || pr.Ref.Name == "" {
			continue // not about a watched object
		}
		k := problemKey(pr)
		now[k] = true
		if p.reported[k] {
			continue
		}
		if sent == maxEventsPerRound {
			p.m.dropped.Inc()
			delete(now, k) // try again next round
			continue
		}
		ref := &corev1.ObjectReference{APIVersion: pr.Ref.APIVersion, Kind: pr.Ref.Kind, Namespace: pr.Ref.Namespace, Name: pr.Ref.Name}
		p.events().Eventf(ref, nil, corev1.EventTypeWarning, pr.Reason, "Render", "left out of the HAProxy configuration: %s", clipMessage(pr.Message))
		p.m.published.Inc()
		sent++
	}
	p.reported = now
}

// ingressStatus sets status.loadBalancer of the Ingresses of the
// config's class to the HAProxy pods' addresses.
func (p *publisher) ingressStatus(ctx context.Context, pipe *pipeline) {
	s := pipe.current()
	class, _ := s.Templates.ExtraContext["ingressClass"].(string)
	if class == "" {
		class = "haptic"
	}
	classless, _ := s.Templates.ExtraContext["ingressClassDefault"].(bool)
	addrs := pipe.pods.Addresses()
	want := fmt.Sprint(addrs)
	if p.lbWritten == nil {
		p.lbWritten = map[string]string{}
	}
	for _, u := range pipe.src.Objects("ingresses") {
		cls, _, _ := unstructured.NestedString(u.Object, "spec", "ingressClassName")
		if cls == "" {
			cls = u.GetAnnotations()["kubernetes.io/ingress.class"]
		}
		if cls != class && (cls != "" || !classless) {
			continue
		}
		key := u.GetNamespace() + "/" + u.GetName()
		if p.lbWritten[key] == want && sameLoadBalancer(u, addrs) {
			continue
		}
		lb := make([]any, len(addrs))
		for i, a := range addrs {
			lb[i] = map[string]any{"ip": a}
		}
		obj := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
			"metadata": map[string]any{"namespace": u.GetNamespace(), "name": u.GetName()},
			"status":   map[string]any{"loadBalancer": map[string]any{"ingress": lb}},
		}}
		if _, err := p.dyn.Resource(ingressGVR).Namespace(u.GetNamespace()).ApplyStatus(ctx, u.GetName(), obj, metav1.ApplyOptions{FieldManager: FieldManager, Force: true}); err != nil {
			p.log.Warn("write Ingress status", "ingress", key, "error", err)
			continue
		}
		p.lbWritten[key] = want
	}
}

// sameLoadBalancer reports whether u's status.loadBalancer.ingress lists
// exactly addrs. It reads the informer's object in place (NestedSlice
// would deep-copy the list of every Ingress, every round).
func sameLoadBalancer(u *unstructured.Unstructured, addrs []string) bool {
	status, _ := u.Object["status"].(map[string]any)
	lb, _ := status["loadBalancer"].(map[string]any)
	got, _ := lb["ingress"].([]any)
	if len(got) != len(addrs) {
		return false
	}
	for i, g := range got {
		m, _ := g.(map[string]any)
		if ip, _ := m["ip"].(string); ip != addrs[i] {
			return false
		}
	}
	return true
}

// output writes the HAProxyCfg of the config: the plan, the problems
// and what each pod runs; at most once per configPublishInterval unless
// the plan changed.
func (p *publisher) output(ctx context.Context, pipe *pipeline, planID string, problems []templating.Problem, pods map[string]string) {
	s := pipe.current()
	if planID == p.lastPlan && time.Since(p.published) < s.ConfigPublishInterval {
		return
	}
	if planID != p.lastPlan && time.Since(p.published) < s.ConfigPublishInterval/4 {
		return // a burst of plans: the next round writes the newest
	}
	cfg, err := p.dyn.Resource(ConfigResource).Namespace(p.namespace).Get(ctx, p.name, metav1.GetOptions{})
	if err != nil {
		p.log.Warn("read config for its output", "error", err)
		return
	}
	now := metav1.Now()
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": v1alpha1.GroupVersion.String(), "kind": v1alpha1.KindHAProxyCfg,
		"metadata": map[string]any{
			"namespace": p.namespace, "name": p.name,
			"ownerReferences": []any{map[string]any{
				"apiVersion": v1alpha1.GroupVersion.String(), "kind": v1alpha1.KindHAProxyTemplateConfig,
				"name": p.name, "uid": string(cfg.GetUID()), "controller": true,
			}},
		},
		"spec": map[string]any{
			"configGeneration": s.Generation, "planID": planID, "problems": int64(len(problems)),
			"renderedAt": now.UTC().Format(time.RFC3339),
		},
	}}
	rc := p.dyn.Resource(OutputResource).Namespace(p.namespace)
	opts := metav1.ApplyOptions{FieldManager: FieldManager, Force: true}
	if _, err := rc.Apply(ctx, p.name, obj, opts); err != nil {
		p.log.Warn("write HAProxyCfg", "error", err)
		return
	}
	ips := pipe.pods.IPs()
	var list []any
	ready := int64(0)
	for _, name := range slices.Sorted(maps.Keys(pods)) {
		if pods[name] == planID {
			ready++
		}
		list = append(list, map[string]any{"name": name, "ip": ips[name], "appliedPlanID": pods[name]})
	}
	st := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": v1alpha1.GroupVersion.String(), "kind": v1alpha1.KindHAProxyCfg,
		"metadata": map[string]any{"namespace": p.namespace, "name": p.name},
		"status":   map[string]any{"readyPods": ready, "totalPods": int64(len(pods)), "pods": list},
	}}
	if _, err := rc.ApplyStatus(ctx, p.name, st, opts); err != nil {
		p.log.Warn("write HAProxyCfg status", "error", err)
		return
	}
	p.published, p.lastPlan = time.Now(), planID
}
