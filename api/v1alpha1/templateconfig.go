package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// HAProxyTemplateConfig is the operator's configuration of one HAProxy
// fleet: the templates HAPTIC renders, the resources they read, the tests a
// new generation must pass before it replaces the running one, and the pods
// the rendered plan goes to. The controller reports in status whether the
// current generation validated and whether the pods run its plan; the
// per-pod detail is in the [HAProxyCfg] of the same name.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced,shortName=htc,categories=haptic
// +kubebuilder:printcolumn:name="Validated",type=string,JSONPath=`.status.conditions[?(@.type=="Validated")].status`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Plan",type=string,JSONPath=`.status.validatedPlanID`
// +kubebuilder:printcolumn:name="Reason",type=string,priority=1,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type HAProxyTemplateConfig struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec HAProxyTemplateConfigSpec `json:"spec"`
	// +optional
	Status HAProxyTemplateConfigStatus `json:"status,omitempty"`
}

// HAProxyTemplateConfigList is a list of [HAProxyTemplateConfig].
//
// +kubebuilder:object:root=true
type HAProxyTemplateConfigList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []HAProxyTemplateConfig `json:"items"`
}

// HAProxyTemplateConfigSpec is a templating config document (the fields
// from watchedResources to validationTests, see [templating.Config]) plus
// the settings that only mean something in a cluster.
type HAProxyTemplateConfigSpec struct {
	// Libraries names the stock template libraries merged before this
	// config, in order; this config's entries replace theirs. Unset means
	// ["base", "ingress"]; an empty list means none.
	// +optional
	// +listType=set
	// +kubebuilder:default={base,ingress}
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:Pattern=`^[a-z][a-z0-9-]*$`
	// +kubebuilder:validation:items:MaxLength=63
	Libraries []string `json:"libraries"`

	// WatchedResources maps an alias (a template identifier, exposed as
	// .resources.<alias>) to the resource it watches.
	// +optional
	// +kubebuilder:validation:MaxProperties=64
	// +kubebuilder:validation:XValidation:rule="self.all(k, k.matches('^[A-Za-z_][A-Za-z0-9_]*$'))",message="watchedResources aliases must be identifiers ([A-Za-z_][A-Za-z0-9_]*)"
	WatchedResources map[string]WatchedResource `json:"watchedResources,omitempty"`
	// HAProxyConfig renders haproxy.cfg. Unset keeps the libraries' one.
	// +optional
	HAProxyConfig *TemplateSource `json:"haproxyConfig,omitempty"`
	// Snippets are named templates reachable with render, renderGlob and
	// memo.
	// +optional
	Snippets map[string]TemplateSource `json:"snippets,omitempty"`
	// Maps are map files whose rendered lines "key value" become entries
	// of maps/<name>.
	// +optional
	Maps map[string]MapTemplate `json:"maps,omitempty"`
	// Files are general files rendered to general/<name>.
	// +optional
	Files map[string]FileTemplate `json:"files,omitempty"`
	// SSLCertificates are PEM files rendered to certs/<name>; an empty
	// rendering writes no file.
	// +optional
	SSLCertificates map[string]TemplateSource `json:"sslCertificates,omitempty"`
	// ExtraContext is any JSON object, exposed to templates as
	// .extraContext.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Type=object
	ExtraContext *runtime.RawExtension `json:"extraContext,omitempty"`
	// ValidationTests must pass before a generation replaces the running
	// one.
	// +optional
	ValidationTests map[string]ValidationTest `json:"validationTests,omitempty"`

	// Dataplane holds the timings of deployment to the HAProxy pods.
	// +optional
	// +kubebuilder:default={}
	Dataplane Dataplane `json:"dataplane,omitempty"`
	// PodSelector selects the HAProxy pods (each with an agent) this
	// config is deployed to.
	PodSelector PodSelector `json:"podSelector"`
	// Agent says how the controller reaches the agents of the selected
	// pods.
	// +optional
	// +kubebuilder:default={}
	Agent Agent `json:"agent,omitempty"`
}

// HAProxyTemplateConfigStatus is what the controller observed of its
// config. The [ConditionValidated] and [ConditionReady] conditions carry
// the reasons and the messages.
type HAProxyTemplateConfigStatus struct {
	// ObservedGeneration is the generation the controller last looked at.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// ValidatedGeneration is the newest generation that passed
	// validation: the one the controller renders. It lags
	// ObservedGeneration while a newer generation is refused.
	// +optional
	ValidatedGeneration int64 `json:"validatedGeneration,omitempty"`
	// ValidatedPlanID is the ID of the newest plan rendered from
	// ValidatedGeneration that passed the gate (haproxy -c).
	// +optional
	ValidatedPlanID string `json:"validatedPlanID,omitempty"`
	// Conditions are Validated and Ready.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +patchStrategy=merge
	// +patchMergeKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type"`
}
