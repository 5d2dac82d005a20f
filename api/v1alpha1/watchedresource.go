package v1alpha1

import (
	"fmt"
	"time"

	"github.com/haptic-io/haptic/store"
	"github.com/haptic-io/haptic/templating"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
)

// WatchedResource names one Kubernetes resource a config watches: the
// fields of [store.WatchedResource] plus where and how to watch it.
type WatchedResource struct {
	// APIVersion is "group/version", or "v1" for the core group.
	// +kubebuilder:validation:MinLength=1
	APIVersion string `json:"apiVersion"`
	// Resource is the plural resource name ("ingresses",
	// "endpointslices").
	// +kubebuilder:validation:MinLength=1
	Resource string `json:"resource"`
	// IndexBy lists field-path expressions whose values, in order, key the
	// alias's index for fetch.
	// +optional
	IndexBy []string `json:"indexBy,omitempty"`

	// Namespace limits the watch to one namespace; empty watches all
	// namespaces (cluster-scoped resources ignore it).
	// +optional
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Namespace string `json:"namespace,omitempty"`
	// LabelSelector is a label selector ("app=web,tier!=cache") the API
	// server applies to the list and watch; empty selects everything.
	// +optional
	LabelSelector string `json:"labelSelector,omitempty"`
	// FieldSelector is a field selector ("metadata.name=web",
	// "spec.type!=ExternalName") the controller applies to what it
	// receives, so it may name any field, not only those the API server
	// can select on; empty selects everything.
	// +optional
	FieldSelector string `json:"fieldSelector,omitempty"`
	// DebounceInterval batches changes of this resource, leading edge
	// first: a change that arrives when none came for the interval is
	// reconciled at once, and the changes that follow it within the
	// interval are held and reconciled together when it ends. Unset leaves
	// the controller's default, which never waits on an idle loop and
	// coalesces changes that arrive during a reconciliation into the next
	// one; "0" disables the interval.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^(0|([0-9]+(\.[0-9]+)?(ns|us|ms|s|m|h))+)$`
	DebounceInterval *metav1.Duration `json:"debounceInterval,omitempty"`
}

// Store returns the resource as the store and the templating engine see
// it: without the Kubernetes-only fields.
func (w WatchedResource) Store() store.WatchedResource {
	return store.WatchedResource{APIVersion: w.APIVersion, Resource: w.Resource, IndexBy: w.IndexBy}
}

// Selectors parses LabelSelector and FieldSelector; an empty one selects
// everything.
func (w WatchedResource) Selectors() (labels.Selector, fields.Selector, error) {
	ls, err := labels.Parse(w.LabelSelector)
	if err != nil {
		return nil, nil, fmt.Errorf("labelSelector %q: %w", w.LabelSelector, err)
	}
	fs, err := fields.ParseSelector(w.FieldSelector)
	if err != nil {
		return nil, nil, fmt.Errorf("fieldSelector %q: %w", w.FieldSelector, err)
	}
	return ls, fs, nil
}

// Debounce returns DebounceInterval; set is false when it is unset (the
// controller's default applies), and d is 0 when it is "0" (disabled).
func (w WatchedResource) Debounce() (d time.Duration, set bool) {
	if w.DebounceInterval == nil {
		return 0, false
	}
	return w.DebounceInterval.Duration, true
}

func (w WatchedResource) validate() error {
	if _, _, err := w.Selectors(); err != nil {
		return err
	}
	if d, _ := w.Debounce(); d < 0 {
		return fmt.Errorf("debounceInterval %s: negative", d)
	}
	return nil
}

// WatchedResourcesFor returns what to watch for merged, the config of s's
// libraries merged with s's own ([templating.Merge]): every alias of
// merged.WatchedResources, with the Kubernetes-only fields (namespace,
// selectors, debounceInterval) of s's entry of the same alias. An alias
// only a library declares is watched in every namespace without
// selectors; to scope it, s restates the alias with its apiVersion and
// resource.
func (s *HAProxyTemplateConfigSpec) WatchedResourcesFor(merged *templating.Config) map[string]WatchedResource {
	out := make(map[string]WatchedResource, len(merged.WatchedResources))
	for alias, sw := range merged.WatchedResources {
		w := s.WatchedResources[alias]
		w.APIVersion, w.Resource, w.IndexBy = sw.APIVersion, sw.Resource, sw.IndexBy
		out[alias] = *w.DeepCopy()
	}
	return out
}
