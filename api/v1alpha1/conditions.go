package v1alpha1

// Condition types of [HAProxyTemplateConfigStatus].
const (
	// ConditionValidated is True when the config's current generation
	// parsed, compiled, passed its validation tests and rendered a
	// configuration haproxy -c accepts; False means the controller keeps
	// rendering ValidatedGeneration and the message says why.
	ConditionValidated = "Validated"
	// ConditionReady is True when every selected pod runs the newest
	// validated plan.
	ConditionReady = "Ready"
)

// Reasons of [ConditionValidated].
const (
	// ReasonValidationPassed: the generation passed every check.
	ReasonValidationPassed = "ValidationPassed"
	// ReasonConfigInvalid: the spec does not parse or its templates do not
	// compile (including the libraries it names).
	ReasonConfigInvalid = "ConfigInvalid"
	// ReasonValidationFailed: a validation test failed, or haproxy -c
	// refused the rendered configuration.
	ReasonValidationFailed = "ValidationFailed"
)

// Reasons of [ConditionReady].
const (
	// ReasonDeployed: every selected pod acknowledged the plan.
	ReasonDeployed = "Deployed"
	// ReasonDeploying: the plan is on its way; no pod refused it yet.
	ReasonDeploying = "Deploying"
	// ReasonDeployFailed: a pod refused the plan or could not be reached;
	// the HAProxyCfg's pods list says which and why.
	ReasonDeployFailed = "DeployFailed"
	// ReasonNoPods: the pod selector matches no running pod.
	ReasonNoPods = "NoPods"
)
