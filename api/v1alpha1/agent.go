package v1alpha1

import (
	"fmt"

	"k8s.io/apimachinery/pkg/labels"
)

// DefaultAgentPort is the port of the agent's HTTP API.
const DefaultAgentPort = 5555

// DefaultTokenKey is the key of [SecretKeyRef] when it is unset.
const DefaultTokenKey = "token"

// PodSelector selects the HAProxy pods a config is deployed to.
type PodSelector struct {
	// MatchLabels are the labels a pod must carry, all of them; at least
	// one is required (an empty selector would select every pod).
	// +kubebuilder:validation:MinProperties=1
	MatchLabels map[string]string `json:"matchLabels"`
	// Namespace is where the pods run; empty means the namespace of the
	// HAProxyTemplateConfig.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Namespace string `json:"namespace,omitempty"`
}

// Selector returns MatchLabels as a label selector, or an error if a key
// or a value is not a valid label.
func (p PodSelector) Selector() (labels.Selector, error) {
	if len(p.MatchLabels) == 0 {
		return nil, fmt.Errorf("matchLabels: empty")
	}
	s, err := labels.ValidatedSelectorFromSet(p.MatchLabels)
	if err != nil {
		return nil, fmt.Errorf("matchLabels: %w", err)
	}
	return s, nil
}

// NamespaceOr returns Namespace, or configNamespace when it is empty.
func (p PodSelector) NamespaceOr(configNamespace string) string {
	if p.Namespace == "" {
		return configNamespace
	}
	return p.Namespace
}

// Agent says how the controller reaches the agent beside each selected
// HAProxy pod.
type Agent struct {
	// Port is the agent's HTTP port on the pod IP. Default 5555.
	// +optional
	// +kubebuilder:default=5555
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	Port int32 `json:"port,omitempty"`
	// TokenSecretRef names the Secret, in the HAProxyTemplateConfig's
	// namespace, holding the bearer token the agents require. Unset sends
	// no token, which only agents started with --insecure-no-auth accept.
	// +optional
	TokenSecretRef *SecretKeyRef `json:"tokenSecretRef,omitempty"`
}

// WithDefaults returns a with its defaults applied: Port 5555 and, when
// TokenSecretRef is set, its Key "token". The result shares nothing with
// a.
func (a Agent) WithDefaults() Agent {
	if a.Port == 0 {
		a.Port = DefaultAgentPort
	}
	if a.TokenSecretRef != nil {
		ref := *a.TokenSecretRef
		if ref.Key == "" {
			ref.Key = DefaultTokenKey
		}
		a.TokenSecretRef = &ref
	}
	return a
}

// Validate checks a with its defaults applied.
func (a Agent) Validate() error {
	a = a.WithDefaults()
	if a.Port < 1 || a.Port > 65535 {
		return fmt.Errorf("port %d: out of range 1-65535", a.Port)
	}
	if a.TokenSecretRef != nil && a.TokenSecretRef.Name == "" {
		return fmt.Errorf("tokenSecretRef: name is empty")
	}
	return nil
}

// SecretKeyRef names one key of a Secret in the referrer's namespace.
type SecretKeyRef struct {
	// Name is the Secret's name.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// Key is the key within the Secret's data. Default "token".
	// +optional
	// +kubebuilder:default=token
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[-._a-zA-Z0-9]+$`
	Key string `json:"key,omitempty"`
}
