package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/haptic-io/haptic/gatewayapi"
)

// gatewayGroup is the Gateway API's group.
const gatewayGroup = "gateway.networking.k8s.io"

// routeAliases are the watched-resource aliases of the route kinds whose
// status.parents the controller writes, by kind.
var routeAliases = map[string]string{"HTTPRoute": "httproutes", "GRPCRoute": "grpcroutes", "TLSRoute": "tlsroutes", "TCPRoute": "tcproutes", "UDPRoute": "udproutes"}

// kindAlias is the alias (and resource) of a Gateway API kind.
func kindAlias(kind string) string {
	switch kind {
	case "GatewayClass":
		return "gatewayclasses"
	case "Gateway":
		return "gateways"
	}
	if a, ok := routeAliases[kind]; ok {
		return a
	}
	return strings.ToLower(kind) + "s"
}

// pendingWrite is how long a written status is trusted to be on its way
// back through the watch: within it, the same status is not written
// again although the informer still shows the old one.
const pendingWrite = 5 * time.Second

// apiStatusWriter writes the Gateway API statuses the model computes:
// server-side apply of the status subresource, one field manager, only
// when the status differs from the object's (lastTransitionTime aside).
// Conditions keep the lastTransitionTime of the object's condition of the
// same type and status ([gatewayapi.WithTransitionTimes]). A route's status.parents is an atomic list: the
// entries of other controllers are kept, and an entry of ours for a
// parent the model no longer lists is removed. Owned by one goroutine.
type apiStatusWriter struct {
	dyn            dynamic.Interface
	log            *slog.Logger
	controllerName string
	now            func() time.Time
	written        map[string]written // by kind/namespace/name
	// settled are the objects whose status equals the model's: the
	// object's status and the model's then (the very maps, kept alive:
	// the informer replaces an object that changes, and the model shares
	// an unchanged route's status). A round where the object's is the
	// same map and the model's equal skips the object.
	settled map[string]settled
}

type settled struct {
	cur, model map[string]any
}

// equalJSON says whether two JSON-shaped values are deep-equal, without
// allocating: the writer compares every status of a round with what it
// saw settle.
func equalJSON(a, b any) bool {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		if sameMap(x, y) {
			return true
		}
		for k, e := range x {
			f, ok := y[k]
			if !ok || !equalJSON(e, f) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !equalJSON(x[i], y[i]) {
				return false
			}
		}
		return true
	case nil, string, int64, bool:
		return a == b
	}
	return reflect.DeepEqual(a, b)
}

// sameMap says whether a and b are the very same map (or both nil).
func sameMap(a, b map[string]any) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

type written struct {
	digest string
	at     time.Time
}

// objects looks an object up by alias, namespace and name (the informer
// cache); list lists an alias.
type objects interface {
	Object(alias, namespace, name string) map[string]any
	List(alias string) []map[string]any
}

// reset forgets what was written (a new term: write what differs).
func (w *apiStatusWriter) reset() { w.written, w.settled = nil, nil }

// write applies statuses and removes our stale route parents; it returns
// how many objects it wrote and the errors' count.
func (w *apiStatusWriter) write(ctx context.Context, statuses []gatewayapi.Status, objs objects) (writes, failures int) {
	if w.written == nil {
		w.written = map[string]written{}
	}
	if w.settled == nil {
		w.settled = map[string]settled{}
	}
	now := w.now()
	ours := map[string]bool{}
	for _, st := range statuses {
		key := st.Kind + "/" + st.Namespace + "/" + st.Name
		ours[key] = true
		cur := objs.Object(kindAlias(st.Kind), st.Namespace, st.Name)
		if cur == nil {
			continue // not listed (yet): the next round writes it
		}
		curStatus, _ := cur["status"].(map[string]any)
		if s, ok := w.settled[key]; ok && sameMap(s.cur, curStatus) && equalJSON(s.model, st.Status) {
			if !sameMap(s.model, st.Status) {
				w.settled[key] = settled{cur: curStatus, model: st.Status}
			}
			continue
		}
		want := cloneJSON(st.Status)
		if _, isRoute := routeAliases[st.Kind]; isRoute {
			want["parents"] = append(otherParents(curStatus, w.controllerName), listOf(want["parents"])...)
		}
		want = gatewayapi.WithTransitionTimes(gatewayapi.Status{Status: want}, curStatus, now).Status
		if curStatus != nil {
			if d := digestStatus(want); d == digestStatus(curStatus) {
				// The object has it: nothing to write while neither
				// changes.
				w.settled[key] = settled{cur: curStatus, model: st.Status}
				w.written[key] = written{digest: d, at: now}
				continue
			}
		}
		delete(w.settled, key)
		ok, err := w.apply(ctx, key, st.APIVersion, st.Kind, st.Namespace, st.Name, want, curStatus, now)
		switch {
		case apierrors.IsNotFound(err):
			// Deleted since the model was built: its delete event follows.
		case err != nil:
			failures++
			w.log.Warn("write status", "kind", st.Kind, "object", gatewayapi.Ref{Namespace: st.Namespace, Name: st.Name}.String(), "error", err)
		case ok:
			writes++
		}
	}
	for key := range w.settled {
		if !ours[key] {
			delete(w.settled, key)
		}
	}
	// Our parent entries on routes the model no longer attaches to us.
	for kind, alias := range routeAliases {
		for _, o := range objs.List(alias) {
			u := unstructured.Unstructured{Object: o}
			key := kind + "/" + u.GetNamespace() + "/" + u.GetName()
			if ours[key] {
				continue
			}
			curStatus, _ := o["status"].(map[string]any)
			others := otherParents(curStatus, w.controllerName)
			if len(others) == len(listOf(curStatus["parents"])) {
				continue
			}
			want := cloneJSON(curStatus)
			want["parents"] = others
			ok, err := w.apply(ctx, key, u.GetAPIVersion(), kind, u.GetNamespace(), u.GetName(), want, curStatus, now)
			switch {
			case apierrors.IsNotFound(err):
			case err != nil:
				failures++
				w.log.Warn("remove stale route parents", "kind", kind, "object", u.GetNamespace()+"/"+u.GetName(), "error", err)
			case ok:
				writes++
			}
		}
	}
	return writes, failures
}

// apply writes want as the status of the object unless it equals cur or
// was written moments ago; it reports whether it wrote.
func (w *apiStatusWriter) apply(ctx context.Context, key, apiVersion, kind, namespace, name string, want, cur map[string]any, now time.Time) (bool, error) {
	d := digestStatus(want)
	if d == digestStatus(cur) {
		w.written[key] = written{digest: d, at: now}
		return false, nil
	}
	if prev, ok := w.written[key]; ok && prev.digest == d && now.Sub(prev.at) < pendingWrite {
		return false, nil
	}
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return false, fmt.Errorf("apiVersion %q: %w", apiVersion, err)
	}
	md := map[string]any{"name": name}
	if namespace != "" {
		md["namespace"] = namespace
	}
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion, "kind": kind, "metadata": md, "status": want}}
	var rc dynamic.ResourceInterface = w.dyn.Resource(gv.WithResource(kindAlias(kind)))
	if namespace != "" {
		rc = w.dyn.Resource(gv.WithResource(kindAlias(kind))).Namespace(namespace)
	}
	if _, err := rc.ApplyStatus(ctx, name, obj, metav1.ApplyOptions{FieldManager: FieldManager, Force: true}); err != nil {
		return false, err
	}
	w.written[key] = written{digest: d, at: now}
	return true, nil
}

// otherParents are the status.parents entries of other controllers.
func otherParents(status map[string]any, ours string) []any {
	out := []any{}
	for _, p := range listOf(status["parents"]) {
		if m, ok := p.(map[string]any); ok && m["controllerName"] != ours {
			out = append(out, p)
		}
	}
	return out
}

func listOf(v any) []any {
	l, _ := v.([]any)
	return l
}

// digestStatus is a status's canonical JSON without its conditions'
// lastTransitionTime: two statuses that differ only in those are equal.
func digestStatus(s map[string]any) string {
	if s == nil {
		return "null"
	}
	b, err := json.Marshal(stripTimes(s))
	if err != nil {
		return "unencodable: " + err.Error()
	}
	return string(b)
}

func stripTimes(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			if k == "lastTransitionTime" {
				continue
			}
			out[k] = stripTimes(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = stripTimes(e)
		}
		return out
	}
	return v
}

// cloneJSON deep-copies a JSON-shaped map (the model's values are shared).
func cloneJSON(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return clone(m).(map[string]any)
}

func clone(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = clone(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = clone(e)
		}
		return out
	case []map[string]any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = clone(e)
		}
		return out
	}
	return v
}
