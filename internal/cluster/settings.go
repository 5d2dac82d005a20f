package cluster

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/haptic-io/haptic/libraries"
	"github.com/haptic-io/haptic/templating"
)

// Timing defaults of a config's dataplane section.
const (
	DefaultDriftPreventionInterval = 60 * time.Second
	DefaultConfigPublishInterval   = 10 * time.Second
	DefaultSyncTimeout             = 2 * time.Minute
)

// DefaultLibraries are the stock libraries merged before a config that
// names none.
var DefaultLibraries = []string{"base", "ingress"}

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
	// AgentPort is the agents' port; TokenSecret names the Secret (in
	// PodNamespace) and key holding their bearer token.
	AgentPort             int
	TokenSecret, TokenKey string
	// DriftPreventionInterval re-dispatches this often although nothing
	// changed; ConfigPublishInterval throttles the HAProxyCfg output;
	// SyncTimeout bounds the informers' first listing.
	DriftPreventionInterval, ConfigPublishInterval, SyncTimeout time.Duration
}

// sameWatch reports whether a and b watch the same objects the same way
// (then a new engine can replace the old one in the running loop).
func (s *Settings) sameWatch(o *Settings) bool {
	return o != nil && slices.Equal(s.Watches, o.Watches) &&
		s.PodNamespace == o.PodNamespace && s.PodSelector.String() == o.PodSelector.String() &&
		s.AgentPort == o.AgentPort && s.TokenSecret == o.TokenSecret && s.TokenKey == o.TokenKey &&
		slices.Equal(slices.Sorted(maps.Keys(s.Templates.WatchedResources)), slices.Sorted(maps.Keys(o.Templates.WatchedResources)))
}

// kubernetesOnly are the spec fields that are not part of the template
// config document.
var kubernetesOnly = []string{"libraries", "dataplane", "podSelector", "agent"}

// watchOnly are the fields of a watched resource that scope its watch.
var watchOnly = []string{"namespace", "labelSelector", "fieldSelector", "debounceInterval"}

// ParseSpec parses the spec of an HAProxyTemplateConfig (JSON-shaped, as
// an unstructured object holds it) of the object in namespace. The
// template part goes through [templating.ParseConfig], so the custom
// resource and the file of `haptic local -c` are one format with one
// validation.
func ParseSpec(spec map[string]any, namespace string, generation int64) (*Settings, error) {
	if spec == nil {
		return nil, errors.New("config: no spec")
	}
	s := &Settings{
		Generation:              generation,
		PodNamespace:            namespace,
		AgentPort:               DefaultAgentPort,
		DriftPreventionInterval: DefaultDriftPreventionInterval,
		ConfigPublishInterval:   DefaultConfigPublishInterval,
		SyncTimeout:             DefaultSyncTimeout,
	}
	doc := maps.Clone(spec)
	for _, k := range kubernetesOnly {
		delete(doc, k)
	}
	var watches []Watch
	if wr, ok := spec["watchedResources"].(map[string]any); ok {
		plain := make(map[string]any, len(wr))
		for _, alias := range slices.Sorted(maps.Keys(wr)) {
			w, _ := wr[alias].(map[string]any)
			plain[alias] = w
			if w == nil {
				continue
			}
			entry := maps.Clone(w)
			wt := Watch{Alias: alias}
			wt.APIVersion, _ = w["apiVersion"].(string)
			wt.Resource, _ = w["resource"].(string)
			var err error
			if wt.Namespace, err = stringField(w, "namespace"); err == nil {
				if wt.LabelSelector, err = stringField(w, "labelSelector"); err == nil {
					wt.FieldSelector, err = stringField(w, "fieldSelector")
				}
			}
			if err != nil {
				return nil, fmt.Errorf("config: watchedResources.%s: %w", alias, err)
			}
			for _, k := range watchOnly {
				delete(entry, k)
			}
			plain[alias] = entry
			watches = append(watches, wt)
		}
		doc["watchedResources"] = plain
	}
	b, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	op, err := templating.ParseConfig(b)
	if err != nil {
		return nil, err
	}
	names := DefaultLibraries
	if l, ok := spec["libraries"].([]any); ok {
		names = nil
		for _, n := range l {
			s, ok := n.(string)
			if !ok {
				return nil, fmt.Errorf("config: libraries: %v is not a name", n)
			}
			names = append(names, s)
		}
	}
	libs, err := libraries.Load(names...)
	if err != nil {
		return nil, fmt.Errorf("config: libraries: %w", err)
	}
	merged := op
	if len(libs) > 0 {
		merged = templating.Merge(libs[0], append(libs[1:], op)...)
	}
	s.Templates = merged
	// The merged config may watch more than the operator's (the
	// libraries'): each of its aliases gets a watch, unscoped unless the
	// operator scoped it.
	byAlias := map[string]Watch{}
	for _, w := range watches {
		byAlias[w.Alias] = w
	}
	s.Watches = nil
	for _, alias := range slices.Sorted(maps.Keys(merged.WatchedResources)) {
		wr := merged.WatchedResources[alias]
		w := byAlias[alias]
		w.Alias, w.APIVersion, w.Resource = alias, wr.APIVersion, wr.Resource
		s.Watches = append(s.Watches, w)
	}
	if err := s.parsePods(spec); err != nil {
		return nil, err
	}
	if err := s.parseDataplane(spec); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *Settings) parsePods(spec map[string]any) error {
	ps, _ := spec["podSelector"].(map[string]any)
	if ns, err := stringField(ps, "namespace"); err != nil {
		return fmt.Errorf("config: podSelector: %w", err)
	} else if ns != "" {
		s.PodNamespace = ns
	}
	ml, _ := ps["matchLabels"].(map[string]any)
	set := labels.Set{}
	for k, v := range ml {
		vs, ok := v.(string)
		if !ok {
			return fmt.Errorf("config: podSelector.matchLabels.%s: not a string", k)
		}
		set[k] = vs
	}
	if len(set) == 0 {
		return errors.New("config: podSelector.matchLabels: required (it finds the HAProxy pods)")
	}
	sel, err := labels.ValidatedSelectorFromSet(set)
	if err != nil {
		return fmt.Errorf("config: podSelector.matchLabels: %w", err)
	}
	s.PodSelector = sel
	ag, _ := spec["agent"].(map[string]any)
	if p, ok := ag["port"]; ok {
		n, ok := p.(int64)
		if !ok || n < 1 || n > 65535 {
			return fmt.Errorf("config: agent.port: %v is not a port", p)
		}
		s.AgentPort = int(n)
	}
	ref, _ := ag["tokenSecretRef"].(map[string]any)
	var err2 error
	if s.TokenSecret, err2 = stringField(ref, "name"); err2 == nil {
		s.TokenKey, err2 = stringField(ref, "key")
	}
	if err2 != nil {
		return fmt.Errorf("config: agent.tokenSecretRef: %w", err2)
	}
	if s.TokenSecret != "" && s.TokenKey == "" {
		s.TokenKey = "token"
	}
	return nil
}

func (s *Settings) parseDataplane(spec map[string]any) error {
	dp, _ := spec["dataplane"].(map[string]any)
	for _, f := range []struct {
		name string
		dst  *time.Duration
	}{
		{"driftPreventionInterval", &s.DriftPreventionInterval},
		{"configPublishInterval", &s.ConfigPublishInterval},
		{"syncTimeout", &s.SyncTimeout},
	} {
		v, err := stringField(dp, f.name)
		if err != nil || v == "" {
			if err != nil {
				return fmt.Errorf("config: dataplane: %w", err)
			}
			continue
		}
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			return fmt.Errorf("config: dataplane.%s: %q is not a duration", f.name, v)
		}
		*f.dst = d
	}
	return nil
}

// stringField returns m[k] when it is a string, "" when absent.
func stringField(m map[string]any, k string) (string, error) {
	v, ok := m[k]
	if !ok || v == nil {
		return "", nil
	}
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("%s: %v is not a string", k, v)
	}
	return s, nil
}
