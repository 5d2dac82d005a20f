package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// TemplateSource is the text of one template ([templating.TemplateSource]).
type TemplateSource struct {
	Template string `json:"template"`
}

// MapTemplate renders one map file ([templating.MapTemplate]).
type MapTemplate struct {
	Template string `json:"template"`
	// Ordered maps keep their entries in rendered order (first match
	// wins); unordered maps are sorted by key.
	// +optional
	Ordered bool `json:"ordered,omitempty"`
}

// FileTemplate renders one general file ([templating.FileTemplate]).
type FileTemplate struct {
	Template string `json:"template"`
	// ReloadOnChange unset means true: HAProxy only reads general files at
	// start-up.
	// +optional
	ReloadOnChange *bool `json:"reloadOnChange,omitempty"`
}

// ValidationTest is one test of a config ([templating.ValidationTest]):
// fixtures per alias rendered with optional extraContext overrides, then
// checked by assertions.
type ValidationTest struct {
	// +optional
	Description string `json:"description,omitempty"`
	// Fixtures maps a watched-resource alias to its objects (any JSON
	// objects, usually Kubernetes manifests).
	// +optional
	Fixtures map[string][]runtime.RawExtension `json:"fixtures,omitempty"`
	// ExtraContext keys override the config's extraContext (shallowly).
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Type=object
	ExtraContext *runtime.RawExtension `json:"extraContext,omitempty"`
	// +optional
	Assertions []Assertion `json:"assertions,omitempty"`
}

// Assertion is one check of a [ValidationTest] ([templating.Assertion]).
type Assertion struct {
	Type AssertionType `json:"type"`
	// Target is haproxy.cfg (the default), map:<name>, file:<name>,
	// cert:<name>, problems or rendering_error.
	// +optional
	// +kubebuilder:validation:Pattern=`^(haproxy\.cfg|problems|rendering_error|(map|file|cert):.+)$`
	Target string `json:"target,omitempty"`
	// Pattern is a regular expression (contains, not_contains,
	// match_count).
	// +optional
	Pattern string `json:"pattern,omitempty"`
	// Patterns are regular expressions that must match in this order
	// (match_order).
	// +optional
	Patterns []string `json:"patterns,omitempty"`
	// Expected is the exact content (equals, a string) or the number of
	// matches (match_count, an integer).
	// +optional
	Expected *intstr.IntOrString `json:"expected,omitempty"`
	// +optional
	Description string `json:"description,omitempty"`
}

// AssertionType names what an [Assertion] checks; the values are those of
// [templating.AssertionType].
//
// +kubebuilder:validation:Enum=contains;not_contains;equals;match_count;match_order;deterministic;haproxy_valid
type AssertionType string
