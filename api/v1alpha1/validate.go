package v1alpha1

import (
	"errors"
	"fmt"
	"regexp"
	"sort"
)

var libraryNameRE = regexp.MustCompile(`^[a-z][a-z0-9-]*$`)

// Validate checks the whole spec: the template part through
// [HAProxyTemplateConfigSpec.TemplatingConfig], and the Kubernetes-only
// fields as the CRD's schema does, plus what the schema cannot check
// (label and field selectors parse). Whether a library name exists is
// checked when the libraries are loaded. The error joins one error per
// problem, each naming its field.
func (s *HAProxyTemplateConfigSpec) Validate() error {
	var errs []error
	if _, err := s.TemplatingConfig(); err != nil {
		errs = append(errs, err)
	}
	seen := map[string]bool{}
	for _, name := range s.Libraries {
		switch {
		case !libraryNameRE.MatchString(name):
			errs = append(errs, fmt.Errorf("spec.libraries %q: not a library name", name))
		case seen[name]:
			errs = append(errs, fmt.Errorf("spec.libraries %q: listed twice", name))
		}
		seen[name] = true
	}
	aliases := make([]string, 0, len(s.WatchedResources))
	for alias := range s.WatchedResources {
		aliases = append(aliases, alias)
	}
	sort.Strings(aliases)
	for _, alias := range aliases {
		if err := s.WatchedResources[alias].validate(); err != nil {
			errs = append(errs, fmt.Errorf("spec.watchedResources %q: %w", alias, err))
		}
	}
	if err := s.Dataplane.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("spec.dataplane: %w", err))
	}
	if _, err := s.PodSelector.Selector(); err != nil {
		errs = append(errs, fmt.Errorf("spec.podSelector: %w", err))
	}
	if err := s.Agent.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("spec.agent: %w", err))
	}
	return errors.Join(errs...)
}
