package v1alpha1

import (
	"encoding/json"
	"fmt"

	"github.com/haptic-io/haptic/store"
	"github.com/haptic-io/haptic/templating"
	"k8s.io/apimachinery/pkg/runtime"
)

// templateDoc is the template part of a spec in the shape of a templating
// config document.
type templateDoc struct {
	WatchedResources map[string]store.WatchedResource `json:"watchedResources,omitempty"`
	HAProxyConfig    *TemplateSource                  `json:"haproxyConfig,omitempty"`
	Snippets         map[string]TemplateSource        `json:"snippets,omitempty"`
	Maps             map[string]MapTemplate           `json:"maps,omitempty"`
	Files            map[string]FileTemplate          `json:"files,omitempty"`
	SSLCertificates  map[string]TemplateSource        `json:"sslCertificates,omitempty"`
	ExtraContext     *runtime.RawExtension            `json:"extraContext,omitempty"`
	ValidationTests  map[string]ValidationTest        `json:"validationTests,omitempty"`
}

// TemplatingConfig returns the template part of s (watchedResources to
// validationTests, without the Kubernetes-only fields) as a templating
// config: s is encoded as a config document and parsed by
// [templating.ParseConfig], so a spec is accepted exactly when the same
// document in a file would be. The libraries s names are not merged; load
// them with libraries.Load(s.LibraryNames()...) and merge this config
// last. Templates are checked by [templating.Compile].
func (s *HAProxyTemplateConfigSpec) TemplatingConfig() (*templating.Config, error) {
	doc := templateDoc{
		HAProxyConfig:   s.HAProxyConfig,
		Snippets:        s.Snippets,
		Maps:            s.Maps,
		Files:           s.Files,
		SSLCertificates: s.SSLCertificates,
		ExtraContext:    s.ExtraContext,
		ValidationTests: s.ValidationTests,
	}
	if s.WatchedResources != nil {
		doc.WatchedResources = make(map[string]store.WatchedResource, len(s.WatchedResources))
		for alias, w := range s.WatchedResources {
			doc.WatchedResources[alias] = w.Store()
		}
	}
	b, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("encode spec as a config document: %w", err)
	}
	cfg, err := templating.ParseConfig(b)
	if err != nil {
		return nil, fmt.Errorf("spec: %w", err)
	}
	return cfg, nil
}

// SpecFromYAML decodes a templating config document (YAML or JSON), such
// as examples/quickstart/config.yaml or a stock library, into a spec. The
// document may also carry the Kubernetes-only fields. Decoding is strict
// (an unknown or duplicate field is an error) and the template part is
// checked by [HAProxyTemplateConfigSpec.TemplatingConfig]; the
// Kubernetes-only fields are left as given (podSelector, which a config
// file lacks, stays empty), so call [HAProxyTemplateConfigSpec.Validate]
// once they are filled in.
func SpecFromYAML(b []byte) (*HAProxyTemplateConfigSpec, error) {
	var s HAProxyTemplateConfigSpec
	if err := decodeStrict(b, &s); err != nil {
		return nil, fmt.Errorf("parse spec: %w", err)
	}
	if _, err := s.TemplatingConfig(); err != nil {
		return nil, err
	}
	return &s, nil
}
