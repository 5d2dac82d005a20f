package v1alpha1

import (
	"errors"
	"fmt"

	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// ParseHAProxyTemplateConfig decodes a manifest (YAML or JSON) of one
// HAProxyTemplateConfig the way the API server reads it: field names match
// case-sensitively, and an unknown or duplicate field is an error. It
// checks apiVersion and kind and validates the spec with
// [HAProxyTemplateConfigSpec.Validate]; defaults are not filled in (the
// accessors apply them).
func ParseHAProxyTemplateConfig(b []byte) (*HAProxyTemplateConfig, error) {
	var c HAProxyTemplateConfig
	if err := decodeStrict(b, &c); err != nil {
		return nil, fmt.Errorf("parse %s: %w", KindHAProxyTemplateConfig, err)
	}
	if gvk := c.GroupVersionKind(); gvk != GroupVersion.WithKind(KindHAProxyTemplateConfig) {
		return nil, fmt.Errorf("parse %s: apiVersion %q, kind %q: want %s, %s",
			KindHAProxyTemplateConfig, c.APIVersion, c.Kind, GroupVersion, KindHAProxyTemplateConfig)
	}
	if err := c.Spec.Validate(); err != nil {
		return nil, fmt.Errorf("%s %s/%s: %w", KindHAProxyTemplateConfig, c.Namespace, c.Name, err)
	}
	return &c, nil
}

// decodeStrict decodes YAML or JSON into v as the API server does: keys
// match field names case-sensitively, and unknown and duplicate fields
// are errors.
func decodeStrict(b []byte, v any) error {
	j, err := yaml.YAMLToJSONStrict(b)
	if err != nil {
		return err
	}
	strict, err := kjson.UnmarshalStrict(j, v)
	if err != nil {
		return err
	}
	return errors.Join(strict...)
}
