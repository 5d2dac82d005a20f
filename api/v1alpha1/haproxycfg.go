package v1alpha1

import (
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// HAProxyCfg is the output of one [HAProxyTemplateConfig], of the same
// name and namespace and owned by it: the plan the controller rendered
// last (spec) and what each selected pod runs (status). Only the
// controller writes it, at most once per the config's
// dataplane.configPublishInterval; deleting the config deletes it.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced,shortName=hcfg,categories=haptic
// +kubebuilder:printcolumn:name="Plan",type=string,JSONPath=`.spec.planID`
// +kubebuilder:printcolumn:name="Ready",type=integer,JSONPath=`.status.readyPods`
// +kubebuilder:printcolumn:name="Pods",type=integer,JSONPath=`.status.totalPods`
// +kubebuilder:printcolumn:name="Problems",type=integer,JSONPath=`.spec.problems`
// +kubebuilder:printcolumn:name="Rendered",type=date,priority=1,JSONPath=`.spec.renderedAt`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type HAProxyCfg struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +optional
	Spec HAProxyCfgSpec `json:"spec,omitempty"`
	// +optional
	Status HAProxyCfgStatus `json:"status,omitempty"`
}

// HAProxyCfgList is a list of [HAProxyCfg].
//
// +kubebuilder:object:root=true
type HAProxyCfgList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []HAProxyCfg `json:"items"`
}

// HAProxyCfgSpec describes the plan the controller rendered last and
// dispatches to the pods.
type HAProxyCfgSpec struct {
	// ConfigGeneration is the generation of the HAProxyTemplateConfig the
	// plan was rendered from.
	// +optional
	ConfigGeneration int64 `json:"configGeneration,omitempty"`
	// PlanID is the ID of the plan: the digest of its canonical encoding.
	// +optional
	PlanID string `json:"planID,omitempty"`
	// ConfigDigest is the digest of the rendered haproxy.cfg (16 hex
	// digits, renderplan.DigestOf).
	// +optional
	// +kubebuilder:validation:Pattern=`^[0-9a-f]{16}$`
	ConfigDigest string `json:"configDigest,omitempty"`
	// RenderedAt is when the plan was rendered.
	// +optional
	RenderedAt *metav1.Time `json:"renderedAt,omitempty"`
	// Problems is the number of objects (or parts of objects) the render
	// left out; the controller reports each as an Event on its object.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Problems int32 `json:"problems,omitempty"`
}

// HAProxyCfgStatus is what the selected pods run.
type HAProxyCfgStatus struct {
	// ReadyPods counts the pods whose last apply of spec.planID succeeded.
	// +optional
	ReadyPods int32 `json:"readyPods,omitempty"`
	// TotalPods counts the selected pods.
	// +optional
	TotalPods int32 `json:"totalPods,omitempty"`
	// Pods has one entry per selected pod, sorted by name.
	// +optional
	// +listType=map
	// +listMapKey=name
	Pods []PodStatus `json:"pods,omitempty"`
}

// PodStatus is the deployment state of one HAProxy pod.
type PodStatus struct {
	// Name is the pod's name.
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
	// IP is the pod IP the controller reaches the agent on.
	// +optional
	IP string `json:"ip,omitempty"`
	// AppliedPlanID is the plan the pod acknowledged last.
	// +optional
	AppliedPlanID string `json:"appliedPlanID,omitempty"`
	// Mode is how the last apply reached the pod.
	// +optional
	Mode ApplyMode `json:"mode,omitempty"`
	// LastError is the last apply's error, verbatim; empty after a
	// success.
	// +optional
	LastError string `json:"lastError,omitempty"`
	// LastApplyTime is when the last apply finished.
	// +optional
	LastApplyTime *metav1.Time `json:"lastApplyTime,omitempty"`
}

// ApplyMode is how an apply reached a pod; the values are those of the
// planner's verdict (agentapi.Verdict).
//
// +kubebuilder:validation:Enum=noop;runtime;file_only;reload
type ApplyMode string

// Apply modes.
const (
	ApplyNoop     ApplyMode = "noop"
	ApplyRuntime  ApplyMode = "runtime"
	ApplyFileOnly ApplyMode = "file_only"
	ApplyReload   ApplyMode = "reload"
)

// NewHAProxyCfg returns the empty output object of cfg: same name and
// namespace, with a controller owner reference to cfg, so that deleting
// the config deletes its output.
func NewHAProxyCfg(cfg *HAProxyTemplateConfig) *HAProxyCfg {
	return &HAProxyCfg{
		TypeMeta: metav1.TypeMeta{APIVersion: GroupVersion.String(), Kind: KindHAProxyCfg},
		ObjectMeta: metav1.ObjectMeta{
			Name:      cfg.Name,
			Namespace: cfg.Namespace,
			OwnerReferences: []metav1.OwnerReference{
				*metav1.NewControllerRef(cfg, GroupVersion.WithKind(KindHAProxyTemplateConfig)),
			},
		},
	}
}

// SetPods sets Status.Pods to a copy of pods sorted by name, and counts
// TotalPods and ReadyPods: the pods whose AppliedPlanID is Spec.PlanID
// and whose LastError is empty.
func (c *HAProxyCfg) SetPods(pods []PodStatus) {
	out := make([]PodStatus, len(pods))
	for i := range pods {
		pods[i].DeepCopyInto(&out[i])
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	var ready int32
	for _, p := range out {
		if p.AppliedPlanID != "" && p.AppliedPlanID == c.Spec.PlanID && p.LastError == "" {
			ready++
		}
	}
	c.Status.Pods = out
	c.Status.TotalPods = int32(len(out))
	c.Status.ReadyPods = ready
}
