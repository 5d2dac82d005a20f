package cluster

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/haptic-io/haptic/api/v1alpha1"
	"github.com/haptic-io/haptic/libraries"
	"github.com/haptic-io/haptic/templating"
	kjson "sigs.k8s.io/json"
)

// DefaultDriftPreventionInterval is the drift loop's period when a
// config has none (the CRD defaults it).
const DefaultDriftPreventionInterval = 60 * time.Second

// Settings are one generation of an HAProxyTemplateConfig, parsed: the
// template config (stock libraries merged, operator last) and what the
// controller needs besides.
type Settings struct {
	// Generation is the object's metadata.generation.
	Generation int64
	// Templates is the merged template config.
	Templates *templating.Config
	// Watches are the watched resources with their Kubernetes scoping, by
	// alias.
	Watches []Watch
	// PodNamespace and PodSelector find the HAProxy pods.
	PodNamespace string
	PodSelector  labels.Selector
	// PodLabels are the podSelector's labels. In gateway mode they go on
	// every fleet object and pod (each fleet's own labels select them).
	PodLabels map[string]string
	// Gateway: the config's libraries include "gateway" (gateway mode:
	// one loop and one HAProxy fleet per Gateway of our GatewayClasses).
	Gateway bool
	// AgentPort is the agents' port; TokenSecret names the Secret (in
	// PodNamespace) and key holding their bearer token.
	AgentPort             int
	TokenSecret, TokenKey string
	// DriftPreventionInterval re-dispatches this often although nothing
	// changed; ConfigPublishInterval throttles the HAProxyCfg output;
	// SyncTimeout bounds the informers' first listing.
	DriftPreventionInterval, ConfigPublishInterval, SyncTimeout time.Duration
	// MinDeploymentInterval is the agents' reload pacing: gateway mode
	// passes it to the fleets' agents (--min-reload-interval).
	MinDeploymentInterval time.Duration
}

// sameWatch reports whether a and b watch the same objects the same way
// (then a new engine can replace the old one in the running loop).
func (s *Settings) sameWatch(o *Settings) bool {
	return o != nil && s.Gateway == o.Gateway && maps.Equal(s.PodLabels, o.PodLabels) && slices.Equal(s.Watches, o.Watches) &&
		s.PodNamespace == o.PodNamespace && s.PodSelector.String() == o.PodSelector.String() &&
		s.AgentPort == o.AgentPort && s.TokenSecret == o.TokenSecret && s.TokenKey == o.TokenKey &&
		slices.Equal(slices.Sorted(maps.Keys(s.Templates.WatchedResources)), slices.Sorted(maps.Keys(o.Templates.WatchedResources)))
}

// ParseSpec parses the spec of an HAProxyTemplateConfig (JSON-shaped, as
// an unstructured object holds it) of the object in namespace: strictly
// into [v1alpha1.HAProxyTemplateConfigSpec], then its template part through
// [templating.ParseConfig] (so the custom resource and the file of
// `haptic local -c` are one format with one validation), merged after the
// stock libraries it names.
func ParseSpec(spec map[string]any, namespace string, generation int64) (*Settings, error) {
	if spec == nil {
		return nil, errors.New("config: no spec")
	}
	raw, err := json.Marshal(spec)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	var typed v1alpha1.HAProxyTemplateConfigSpec
	strict, err := kjson.UnmarshalStrict(raw, &typed)
	if err == nil {
		err = errors.Join(strict...)
	}
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	if err := typed.Validate(); err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	op, err := typed.TemplatingConfig()
	if err != nil {
		return nil, err
	}
	libs, err := libraries.Load(typed.LibraryNames()...)
	if err != nil {
		return nil, fmt.Errorf("config: libraries: %w", err)
	}
	merged := op
	if len(libs) > 0 {
		merged = templating.Merge(libs[0], append(libs[1:], op)...)
	}
	sel, err := typed.PodSelector.Selector()
	if err != nil {
		return nil, fmt.Errorf("config: podSelector: %w", err)
	}
	agent := typed.Agent.WithDefaults()
	dp := typed.Dataplane.WithDefaults()
	s := &Settings{
		Generation:              generation,
		Templates:               merged,
		PodNamespace:            typed.PodSelector.NamespaceOr(namespace),
		PodSelector:             sel,
		PodLabels:               maps.Clone(typed.PodSelector.MatchLabels),
		Gateway:                 slices.Contains(typed.LibraryNames(), GatewayLibrary),
		AgentPort:               int(agent.Port),
		DriftPreventionInterval: dp.DriftPreventionInterval.Duration,
		ConfigPublishInterval:   dp.ConfigPublishInterval.Duration,
		SyncTimeout:             dp.SyncTimeout.Duration,
		MinDeploymentInterval:   dp.MinDeploymentInterval.Duration,
	}
	if ref := agent.TokenSecretRef; ref != nil {
		s.TokenSecret, s.TokenKey = ref.Name, ref.Key
	}
	// The merged config may watch more than the operator's (the
	// libraries'): each of its aliases gets a watch, unscoped unless the
	// operator scoped it.
	for alias, w := range typed.WatchedResourcesFor(merged) {
		d, _ := w.Debounce()
		s.Watches = append(s.Watches, Watch{Alias: alias, APIVersion: w.APIVersion, Resource: w.Resource,
			Namespace: w.Namespace, LabelSelector: w.LabelSelector, FieldSelector: w.FieldSelector, Debounce: d})
	}
	slices.SortFunc(s.Watches, func(a, b Watch) int { return strings.Compare(a.Alias, b.Alias) })
	return s, nil
}
