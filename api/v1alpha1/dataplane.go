package v1alpha1

import (
	"errors"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Defaults and ceilings of [Dataplane]; the CRD's schema carries the same
// defaults.
const (
	DefaultMinDeploymentInterval     = 2 * time.Second
	DefaultDriftPreventionInterval   = 60 * time.Second
	DefaultConfigPublishInterval     = 10 * time.Second
	DefaultReloadVerificationTimeout = 60 * time.Second
	DefaultSyncTimeout               = 2 * time.Minute

	// MaxMinDeploymentInterval is the agent's ceiling of its reload
	// pacing.
	MaxMinDeploymentInterval = 60 * time.Second
	// MaxReloadVerificationTimeout is the agent's ceiling of the wait for
	// a reloaded worker.
	MaxReloadVerificationTimeout = 60 * time.Second
)

// Dataplane holds the timings of deployment to the HAProxy pods. Every
// field is a Go duration string ("2s", "1m30s"); an unset field takes its
// default, which [Dataplane.WithDefaults] applies in Go and the API server
// applies on write.
type Dataplane struct {
	// MinDeploymentInterval is the least time between two deployments
	// that reload a pod; 0 disables the pacing. Default 2s, at most 60s
	// (the agent's ceiling).
	// +optional
	// +kubebuilder:default="2s"
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^(0|([0-9]+(\.[0-9]+)?(ns|us|ms|s|m|h))+)$`
	// +kubebuilder:validation:XValidation:rule="duration(self) <= duration('60s')",message="minDeploymentInterval must be at most 60s"
	MinDeploymentInterval *metav1.Duration `json:"minDeploymentInterval,omitempty"`
	// DriftPreventionInterval is how often the controller re-deploys the
	// current plan to a pod that reported no change, so a pod changed
	// behind its back is brought back. Default 60s; must be positive.
	// +optional
	// +kubebuilder:default="60s"
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^(0|([0-9]+(\.[0-9]+)?(ns|us|ms|s|m|h))+)$`
	// +kubebuilder:validation:XValidation:rule="duration(self) > duration('0s')",message="driftPreventionInterval must be positive"
	DriftPreventionInterval *metav1.Duration `json:"driftPreventionInterval,omitempty"`
	// ConfigPublishInterval is the least time between two writes of the
	// HAProxyCfg output object. Default 10s; must be positive.
	// +optional
	// +kubebuilder:default="10s"
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^(0|([0-9]+(\.[0-9]+)?(ns|us|ms|s|m|h))+)$`
	// +kubebuilder:validation:XValidation:rule="duration(self) > duration('0s')",message="configPublishInterval must be positive"
	ConfigPublishInterval *metav1.Duration `json:"configPublishInterval,omitempty"`
	// ReloadVerificationTimeout bounds the wait for a reloaded HAProxy
	// worker to serve. Default 60s, which is also the ceiling; must be
	// positive.
	// +optional
	// +kubebuilder:default="60s"
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^(0|([0-9]+(\.[0-9]+)?(ns|us|ms|s|m|h))+)$`
	// +kubebuilder:validation:XValidation:rule="duration(self) > duration('0s') && duration(self) <= duration('60s')",message="reloadVerificationTimeout must be positive and at most 60s"
	ReloadVerificationTimeout *metav1.Duration `json:"reloadVerificationTimeout,omitempty"`
	// SyncTimeout bounds the wait for every watch to list its resource
	// before the first render. Default 2m; must be positive.
	// +optional
	// +kubebuilder:default="2m"
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^(0|([0-9]+(\.[0-9]+)?(ns|us|ms|s|m|h))+)$`
	// +kubebuilder:validation:XValidation:rule="duration(self) > duration('0s')",message="syncTimeout must be positive"
	SyncTimeout *metav1.Duration `json:"syncTimeout,omitempty"`
}

// WithDefaults returns d with every unset field set to its default. The
// result's fields are never nil and share nothing with d.
func (d Dataplane) WithDefaults() Dataplane {
	orDefault := func(v *metav1.Duration, def time.Duration) *metav1.Duration {
		if v == nil {
			return &metav1.Duration{Duration: def}
		}
		return &metav1.Duration{Duration: v.Duration}
	}
	return Dataplane{
		MinDeploymentInterval:     orDefault(d.MinDeploymentInterval, DefaultMinDeploymentInterval),
		DriftPreventionInterval:   orDefault(d.DriftPreventionInterval, DefaultDriftPreventionInterval),
		ConfigPublishInterval:     orDefault(d.ConfigPublishInterval, DefaultConfigPublishInterval),
		ReloadVerificationTimeout: orDefault(d.ReloadVerificationTimeout, DefaultReloadVerificationTimeout),
		SyncTimeout:               orDefault(d.SyncTimeout, DefaultSyncTimeout),
	}
}

// Validate checks the ranges the schema checks, on d with its defaults
// applied.
func (d Dataplane) Validate() error {
	d = d.WithDefaults()
	var errs []error
	check := func(name string, v time.Duration, positive bool, ceiling time.Duration) {
		switch {
		case v < 0:
			errs = append(errs, fmt.Errorf("%s %s: must not be negative", name, v))
		case positive && v == 0:
			errs = append(errs, fmt.Errorf("%s %s: must be positive", name, v))
		case ceiling > 0 && v > ceiling:
			errs = append(errs, fmt.Errorf("%s %s: must be at most %s", name, v, ceiling))
		}
	}
	check("minDeploymentInterval", d.MinDeploymentInterval.Duration, false, MaxMinDeploymentInterval)
	check("driftPreventionInterval", d.DriftPreventionInterval.Duration, true, 0)
	check("configPublishInterval", d.ConfigPublishInterval.Duration, true, 0)
	check("reloadVerificationTimeout", d.ReloadVerificationTimeout.Duration, true, MaxReloadVerificationTimeout)
	check("syncTimeout", d.SyncTimeout.Duration, true, 0)
	return errors.Join(errs...)
}
