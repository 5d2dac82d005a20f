package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"mime"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/haptic-io/haptic/internal/controller"
	"github.com/haptic-io/haptic/rendergate"
	"github.com/haptic-io/haptic/renderplan"
	"github.com/haptic-io/haptic/store"
	"github.com/haptic-io/haptic/templating"
)

// WebhookPath is where the webhook answers AdmissionReviews.
const WebhookPath = "/validate"

// Deadlines of one review. The apiserver says how long it waits in the
// request's timeout parameter; the webhook answers reviewMargin before
// that (at most a fifth of it), so that a check cut short reaches the
// apiserver as an error of the webhook, which the failure policy
// decides, rather than as a timeout.
const (
	defaultReviewTimeout = 10 * time.Second
	maxReviewTimeout     = 30 * time.Second
	reviewMargin         = time.Second
)

// worldReasons are the problems that depend on objects other than the
// candidate and may resolve when those arrive (kubectl apply -f dir
// creates an Ingress before its Service): they are warnings, never
// refusals.
var worldReasons = map[string]bool{
	templating.ReasonServiceNotFound:     true,
	templating.ReasonServicePortNotFound: true,
	templating.ReasonServiceUnsupported:  true,
	templating.ReasonEndpointInvalid:     true,
	"SecretNotFound":                     true, // the ingress library's, for a tls Secret not there yet
}

// errNotReady: the controller cannot judge yet (no accepted config, the
// informers have not listed the world). The apiserver's failure policy
// decides.
var errNotReady = errors.New("not ready")

// admitter is the webhook's handler: it renders an object of a watched
// resource into the world the controller renders now, and checks its
// HAProxyTemplateConfig with the config-load gate.
type admitter struct {
	// target returns the running loop and its watches; nil before the
	// first accepted config.
	target func() (*controller.Loop, []Watch)
	// gate is the config-load gate, for a spec of this controller's
	// config.
	gate func(ctx context.Context, generation int64, spec map[string]any) error
	// configNamespace and configName name this controller's config.
	configNamespace, configName string
	// checker runs haproxy -c; its own, so that the loop's pauses do not
	// hold a review.
	checker renderplan.Checker
	log     *slog.Logger
	m       *admissionMetrics

	// render is held by the review that renders: renders side by side
	// would each go without the engine's warm state.
	render chan struct{}
	passed *passedPlans
}

func newAdmitter(a admitter) *admitter {
	if a.log == nil {
		a.log = slog.New(slog.DiscardHandler)
	}
	if a.m == nil {
		a.m = newAdmissionMetrics(prometheus.NewRegistry())
	}
	a.render = make(chan struct{}, 1)
	a.passed = &passedPlans{}
	return &a
}

func (a *admitter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	if r.Method != http.MethodPost {
		http.Error(w, "POST an admission.k8s.io/v1 AdmissionReview", http.StatusMethodNotAllowed)
		return
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		http.Error(w, "want Content-Type application/json", http.StatusUnsupportedMediaType)
		return
	}
	rv, err := decodeReview(r.Body, MaxReviewBytes)
	if err != nil {
		code := http.StatusBadRequest
		if errors.Is(err, errReviewTooLarge) {
			code = http.StatusRequestEntityTooLarge
		}
		a.m.reviews.WithLabelValues("", "error").Inc()
		http.Error(w, err.Error(), code)
		return
	}
	req := rv.req
	log := a.log.With("uid", string(req.UID), "operation", string(req.Operation), "resource", req.Resource.Resource,
		"object", objectName(req.Namespace, req.Name))
	ctx, cancel := context.WithTimeout(r.Context(), reviewDeadline(r.URL.Query().Get("timeout")))
	defer cancel()
	v, err := a.review(ctx, rv)
	took := time.Since(start)
	a.m.duration.WithLabelValues("total").Observe(took.Seconds())
	if err != nil {
		a.m.reviews.WithLabelValues(req.Resource.Resource, "error").Inc()
		log.Warn("admission review not judged: the failure policy decides", "error", err, "took", took)
		http.Error(w, "haptic could not judge the request: "+clip(err.Error(), maxMessageBytes), http.StatusServiceUnavailable)
		return
	}
	body, err := encodeReview(string(req.UID), v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	label := "allowed"
	if !v.allowed {
		label = "refused"
		log.Info("admission refused", "message", v.message, "took", took)
	} else {
		log.Debug("admission allowed", "warnings", len(v.warnings), "took", took)
	}
	a.m.reviews.WithLabelValues(req.Resource.Resource, label).Inc()
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(body)
}

// reviewDeadline is how long a review may take, from the apiserver's
// timeout parameter ("5s").
func reviewDeadline(param string) time.Duration {
	d, err := time.ParseDuration(param)
	if err != nil || d <= 0 {
		d = defaultReviewTimeout
	}
	d = min(d, maxReviewTimeout)
	return d - min(reviewMargin, d/5)
}

// review judges one request.
func (a *admitter) review(ctx context.Context, rv *review) (verdict, error) {
	req := rv.req
	if req.Operation == admissionv1.Delete || req.Operation == admissionv1.Connect {
		return verdict{allowed: true}, nil
	}
	if req.Resource.Group == ConfigResource.Group && req.Resource.Resource == ConfigResource.Resource && req.SubResource == "" {
		return a.reviewConfig(ctx, rv)
	}
	return a.reviewObject(ctx, rv)
}

// reviewConfig passes this controller's HAProxyTemplateConfig through
// the config-load gate.
func (a *admitter) reviewConfig(ctx context.Context, rv *review) (verdict, error) {
	u := unstructured.Unstructured{Object: rv.object}
	ref := "HAProxyTemplateConfig " + objectName(u.GetNamespace(), u.GetName())
	if u.GetNamespace() != a.configNamespace || u.GetName() != a.configName {
		return verdict{allowed: true, message: ref + " is not this controller's config (" + objectName(a.configNamespace, a.configName) + "): not checked"}, nil
	}
	spec, _ := rv.object["spec"].(map[string]any)
	if rv.oldObject != nil {
		if old, _ := rv.oldObject["spec"].(map[string]any); reflect.DeepEqual(old, spec) {
			return verdict{allowed: true}, nil // metadata only: the spec passed when it was stored
		}
	}
	if err := a.gate(ctx, u.GetGeneration(), spec); err != nil {
		if ctx.Err() != nil {
			return verdict{}, fmt.Errorf("config-load gate: %w", ctx.Err())
		}
		return verdict{message: fmt.Sprintf("HAPTIC refuses %s (%s): %s", ref, refusalReason(err), err)}, nil
	}
	return verdict{allowed: true}, nil
}

// reviewObject renders an object of a watched resource into the current
// world and refuses it when the render leaves part of it out or HAProxy
// refuses the result.
func (a *admitter) reviewObject(ctx context.Context, rv *review) (verdict, error) {
	req := rv.req
	loop, watches := a.target()
	if loop == nil {
		return verdict{}, fmt.Errorf("%w: no accepted HAProxyTemplateConfig yet", errNotReady)
	}
	obj := trimmed(rv.object)
	u := unstructured.Unstructured{Object: obj}
	if u.GetDeletionTimestamp() != nil {
		return verdict{allowed: true}, nil // finalizers going: never hold a deletion
	}
	gvr := schema.GroupVersionResource{Group: req.Resource.Group, Version: req.Resource.Version, Resource: req.Resource.Resource}
	overlays, watched, err := overlaysFor(watches, gvr, obj)
	if err != nil {
		return verdict{}, err
	}
	ref := templating.ObjectRef{APIVersion: u.GetAPIVersion(), Kind: u.GetKind(), Namespace: u.GetNamespace(), Name: u.GetName()}
	if !watched {
		return verdict{allowed: true, message: fmt.Sprintf("%s: %s is not a watched resource: not checked", ref, gvr)}, nil
	}
	if len(overlays) == 0 {
		return verdict{allowed: true, message: ref.String() + " is outside the watches' namespace and selectors: not checked"}, nil
	}

	select {
	case a.render <- struct{}{}:
	case <-ctx.Done():
		return verdict{}, fmt.Errorf("waiting for the reviews before it: %w", ctx.Err())
	}
	defer func() { <-a.render }()
	world, err := loop.Candidate(overlays...)
	if err != nil {
		return verdict{allowed: true, message: fmt.Sprintf("%s cannot be stored: %v; not checked", ref, err)}, nil
	}
	if !world.Initialized {
		return verdict{}, fmt.Errorf("%w: the informers have not listed the watched resources yet", errNotReady)
	}
	t0 := time.Now()
	out, problems, rerr := world.Engine.Render(ctx, world.Snapshot, templating.RenderOptions{})
	a.m.duration.WithLabelValues("render").Observe(time.Since(t0).Seconds())
	if rerr != nil {
		if ctx.Err() != nil {
			return verdict{}, fmt.Errorf("render: %w", ctx.Err())
		}
		return a.judgeRenderError(ctx, loop, ref, rerr)
	}

	var v verdict
	v.allowed = true
	var refused []templating.Problem
	for _, p := range problems {
		if !sameObject(p.Ref, ref) {
			continue
		}
		switch {
		case worldReasons[p.Reason]:
			v.warnings = append(v.warnings, p.Reason+": "+p.Message)
		case req.Operation == admissionv1.Update && hadProblem(world.Problems, ref, p):
			v.warnings = append(v.warnings, p.Reason+": "+p.Message+" (the stored version has it too)")
		default:
			refused = append(refused, p)
		}
	}
	if len(refused) > 0 {
		return verdict{message: problemsMessage(ref, refused), warnings: v.warnings}, nil
	}

	tree, cerr := a.check(ctx, out)
	if cerr == nil {
		return v, nil
	}
	var ce *rendergate.CheckError
	if !errors.As(cerr, &ce) {
		return verdict{}, fmt.Errorf("haproxy -c: %w", cerr)
	}
	// HAProxy refuses the world with the candidate: is it the candidate,
	// or the world already?
	base, err := loop.Candidate()
	if err != nil {
		return verdict{}, err
	}
	bout, _, berr := base.Engine.Render(ctx, base.Snapshot, templating.RenderOptions{})
	if berr == nil {
		_, berr = a.check(ctx, bout)
	}
	if berr != nil && ctx.Err() != nil {
		return verdict{}, fmt.Errorf("haproxy -c of the current configuration: %w", ctx.Err())
	}
	if berr != nil {
		v.warnings = append(v.warnings, "the current configuration fails already, without "+ref.String()+": "+firstLine(berr.Error())+"; not held against it")
		return v, nil
	}
	return verdict{message: checkMessage(ref, ce, tree), warnings: v.warnings}, nil
}

// judgeRenderError refuses the candidate whose render fails, unless the
// current world fails to render as well.
func (a *admitter) judgeRenderError(ctx context.Context, loop *controller.Loop, ref templating.ObjectRef, rerr error) (verdict, error) {
	base, err := loop.Candidate()
	if err != nil {
		return verdict{}, err
	}
	if _, _, berr := base.Engine.Render(ctx, base.Snapshot, templating.RenderOptions{}); berr != nil {
		if ctx.Err() != nil {
			return verdict{}, fmt.Errorf("render: %w", ctx.Err())
		}
		return verdict{allowed: true, warnings: []string{"the current configuration fails to render already, without " + ref.String() + ": " + firstLine(berr.Error())}}, nil
	}
	return verdict{message: fmt.Sprintf("HAPTIC refuses %s: the templates fail to render with it: %v", ref, rerr)}, nil
}

// check runs haproxy -c on the sparse tree of out (sparseTree), unless a
// plan with its ID passed before; tree is what it checked.
func (a *admitter) check(ctx context.Context, out *renderplan.Output) (tree *renderplan.Output, err error) {
	id := out.ID()
	if a.passed.has(id) {
		return out, nil
	}
	tree, _ = sparseTree(out)
	t0 := time.Now()
	err = a.checker.Check(ctx, tree)
	a.m.duration.WithLabelValues("check").Observe(time.Since(t0).Seconds())
	if err == nil {
		a.passed.add(id)
	}
	return tree, err
}

// overlaysFor files obj under each watch of gvr whose namespace, label
// selector and field selector it matches; watched says whether any
// watch is of gvr.
func overlaysFor(watches []Watch, gvr schema.GroupVersionResource, obj map[string]any) (overlays []store.Overlay, watched bool, err error) {
	u := unstructured.Unstructured{Object: obj}
	for _, w := range watches {
		gv, err := schema.ParseGroupVersion(w.APIVersion)
		if err != nil || gv.WithResource(w.Resource) != gvr {
			continue
		}
		watched = true
		if w.Namespace != "" && w.Namespace != u.GetNamespace() {
			continue
		}
		ls, err := labels.Parse(w.LabelSelector)
		if err != nil {
			return nil, true, fmt.Errorf("watch %s: labelSelector: %w", w.Alias, err)
		}
		if !ls.Matches(labels.Set(u.GetLabels())) {
			continue
		}
		ff, err := parseFieldFilter(w.FieldSelector)
		if err != nil {
			return nil, true, fmt.Errorf("watch %s: fieldSelector: %w", w.Alias, err)
		}
		if !ff.matches(obj) {
			continue
		}
		overlays = append(overlays, store.Overlay{Alias: w.Alias, Object: obj})
	}
	return overlays, watched, nil
}

// trimmed returns obj as the informer source stores it (trim).
func trimmed(obj map[string]any) map[string]any {
	u := &unstructured.Unstructured{Object: obj}
	_, _ = trim(u)
	return u.Object
}

func sameObject(a, b templating.ObjectRef) bool {
	return a.Kind == b.Kind && a.Namespace == b.Namespace && a.Name == b.Name
}

// hadProblem reports whether the loop's last render found p on ref too.
func hadProblem(ps []templating.Problem, ref templating.ObjectRef, p templating.Problem) bool {
	for _, q := range ps {
		if sameObject(q.Ref, ref) && q.Reason == p.Reason && q.Message == p.Message {
			return true
		}
	}
	return false
}

func objectName(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
}

// passedPlans remembers the last plan IDs haproxy -c passed: a review
// whose render is one of them (an object the templates ignore, a
// re-apply) needs no check.
type passedPlans struct {
	mu  sync.Mutex
	ids []string // guarded by mu; oldest first, at most maxPassedPlans
}

const maxPassedPlans = 64

func (p *passedPlans) has(id string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, x := range p.ids {
		if x == id {
			return true
		}
	}
	return false
}

func (p *passedPlans) add(id string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.ids) == maxPassedPlans {
		p.ids = append(p.ids[:0], p.ids[1:]...)
	}
	p.ids = append(p.ids, id)
}

// firstLine is s up to its first newline.
func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
