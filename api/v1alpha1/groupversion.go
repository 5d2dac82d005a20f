package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupName is the API group of HAPTIC's resources.
const GroupName = "haproxy-haptic.org"

// Kinds and resources of this version.
const (
	KindHAProxyTemplateConfig     = "HAProxyTemplateConfig"
	KindHAProxyCfg                = "HAProxyCfg"
	ResourceHAProxyTemplateConfig = "haproxytemplateconfigs"
	ResourceHAProxyCfg            = "haproxycfgs"
)

var (
	// GroupVersion is haproxy-haptic.org/v1alpha1.
	GroupVersion = schema.GroupVersion{Group: GroupName, Version: "v1alpha1"}

	// SchemeBuilder registers this version's types with a scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme adds this version's types to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

// Resource returns the group-qualified resource of this group, as listers
// and API errors name it.
func Resource(resource string) schema.GroupResource {
	return GroupVersion.WithResource(resource).GroupResource()
}

func addKnownTypes(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion,
		&HAProxyTemplateConfig{}, &HAProxyTemplateConfigList{},
		&HAProxyCfg{}, &HAProxyCfgList{},
	)
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}
