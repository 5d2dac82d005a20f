package cluster

import (
	"context"
	"fmt"

	"github.com/haptic-io/haptic/api/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"
)

// Group, version and resources of HAPTIC's custom resources.
var (
	ConfigResource = v1alpha1.GroupVersion.WithResource(v1alpha1.ResourceHAProxyTemplateConfig)
	OutputResource = v1alpha1.GroupVersion.WithResource(v1alpha1.ResourceHAProxyCfg)
)

// configObject is one generation of the HAProxyTemplateConfig.
type configObject struct {
	generation int64
	spec       map[string]any
}

// watchConfig sends each new generation of the named config (the latest
// only, when they come faster than they are taken) until ctx ends.
func watchConfig(ctx context.Context, dyn dynamic.Interface, namespace, name string, out chan configObject) error {
	rc := dyn.Resource(ConfigResource).Namespace(namespace)
	sel := fields.OneTermEqualSelector("metadata.name", name).String()
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.FieldSelector = sel
			return rc.List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.FieldSelector = sel
			return rc.Watch(ctx, o)
		},
	}
	inf := cache.NewSharedIndexInformer(lw, &unstructured.Unstructured{}, 0, cache.Indexers{})
	var last int64
	send := func(obj any) {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok || u.GetGeneration() == last {
			return // a status write: the spec did not change
		}
		last = u.GetGeneration()
		spec, _ := u.Object["spec"].(map[string]any)
		co := configObject{generation: u.GetGeneration(), spec: spec}
		for {
			select {
			case out <- co:
				return
			case <-out: // drop the older generation nobody took yet
			case <-ctx.Done():
				return
			}
		}
	}
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    send,
		UpdateFunc: func(_, o any) { send(o) },
	}); err != nil {
		return fmt.Errorf("watch config: %w", err)
	}
	inf.RunWithContext(ctx)
	return ctx.Err()
}
