package store

// WatchedResource names one Kubernetes resource a config watches.
type WatchedResource struct {
	// APIVersion is "group/version", or "v1" for the core group.
	APIVersion string `json:"apiVersion"`
	// Resource is the plural resource name ("ingresses", "endpointslices").
	Resource string `json:"resource"`
	// IndexBy lists field-path expressions ([ParseIndexExpr]) whose values,
	// in order, key the alias's index for Fetch.
	IndexBy []string `json:"indexBy,omitempty"`
}
