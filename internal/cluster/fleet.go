package cluster

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"

	"github.com/haptic-io/haptic/gatewayapi"
)

// Defaults of [FleetConfig].
const (
	DefaultFleetHAProxyImage = "docker.io/haproxytech/haproxy-debian:3.4"
	DefaultFleetAgentImage   = "ghcr.io/haptic-io/haptic:0.1.0"
	DefaultFleetReplicas     = 2
	// DefaultFleetUser is the user and group the fleet's containers run as
	// (65532, "nonroot"); HAProxy binds the listeners' ports below 1024
	// through the pod's net.ipv4.ip_unprivileged_port_start=0 sysctl,
	// without a capability.
	DefaultFleetUser = 65532
)

// Labels and annotations of the objects of a Gateway's fleet.
const (
	// LabelGatewayName is the Gateway API's label for resources generated
	// for a Gateway (GEP-1762); set when the name fits a label value.
	LabelGatewayName = "gateway.networking.k8s.io/gateway-name"
	// LabelFleetConfig names the HAProxyTemplateConfig (namespace.name,
	// hashed when too long) whose controller provisioned the fleet: it
	// deletes only its own fleets.
	LabelFleetConfig = "haproxy-haptic.org/config"
	// AnnotationFleetGateway is the Gateway (namespace/name) a fleet object
	// serves.
	AnnotationFleetGateway = "haproxy-haptic.org/gateway"
	labelName              = "app.kubernetes.io/name"
	labelInstance          = "app.kubernetes.io/instance"
	labelComponent         = "app.kubernetes.io/component"
	labelManagedBy         = "app.kubernetes.io/managed-by"
	fleetComponent         = "gateway"
	fleetManagedBy         = "haptic"
	fleetPodName           = "haptic-haproxy"
	fleetTokenKey          = "token"
	fleetBaseDir           = "/var/lib/haptic"
	// agentBinary is the agent's program in the haptic image: the agent
	// alone, lighter in every pod than `haptic agent`.
	agentBinary = "/usr/local/bin/haptic-agent"
)

// FleetConfig is the shape of the HAProxy fleet the controller provisions
// for each Gateway it serves: a Deployment of HAProxy pods (an init
// container writing the bootstrap config, haproxy in master-worker mode,
// the agent on podIP), a Service with the listeners' ports and the
// agents' token Secret, all in the Gateway's namespace and owned by the
// Gateway. Zero fields take the defaults.
type FleetConfig struct {
	// HAProxyImage runs the haproxy container; empty means
	// [DefaultFleetHAProxyImage].
	HAProxyImage string
	// AgentImage is the haptic image of the bootstrap init container and
	// the agent; empty means [DefaultFleetAgentImage].
	AgentImage string
	// Replicas is the number of HAProxy pods per Gateway; zero means
	// [DefaultFleetReplicas].
	Replicas int32
	// ServiceType is the type of each fleet's Service; empty means
	// LoadBalancer. Its load-balancer ingress addresses, when any, are the
	// Gateway's addresses; otherwise the Ready pods' IPs are.
	ServiceType corev1.ServiceType
	// HAProxyResources and AgentResources are the containers' resource
	// requirements; zero means requests of 100m CPU / 128Mi (haproxy) and
	// 50m / 64Mi (agent, bootstrap), no limits.
	HAProxyResources, AgentResources corev1.ResourceRequirements
	// RunAsUser is the containers' user and group; zero means
	// [DefaultFleetUser].
	RunAsUser int64
}

func (f FleetConfig) withDefaults() FleetConfig {
	if f.HAProxyImage == "" {
		f.HAProxyImage = DefaultFleetHAProxyImage
	}
	if f.AgentImage == "" {
		f.AgentImage = DefaultFleetAgentImage
	}
	if f.Replicas == 0 {
		f.Replicas = DefaultFleetReplicas
	}
	if f.ServiceType == "" {
		f.ServiceType = corev1.ServiceTypeLoadBalancer
	}
	if f.HAProxyResources.Requests == nil && f.HAProxyResources.Limits == nil {
		f.HAProxyResources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")}
	}
	if f.AgentResources.Requests == nil && f.AgentResources.Limits == nil {
		f.AgentResources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("50m"), corev1.ResourceMemory: resource.MustParse("64Mi")}
	}
	if f.RunAsUser == 0 {
		f.RunAsUser = DefaultFleetUser
	}
	return f
}

// fleet is one Gateway's fleet: its names, labels and what it is made
// of.
type fleet struct {
	gw   gatewayapi.Ref
	uid  types.UID // the Gateway's, for the owner references
	name string    // Deployment and Service; the Secret is name + "-agent-token"
	// selector picks the fleet's pods (the Deployment's selector);
	// labels are every object's.
	selector, labels map[string]string
	cfg              FleetConfig
	agentPort        int32
	minReload        time.Duration // the config's minDeploymentInterval: the agents' reload pacing, 0 none
	token            string
	listeners        []gatewayapi.Listener
	// infraLabels and infraAnnotations are the Gateway's
	// spec.infrastructure labels and annotations: every object and pod
	// of the fleet carries them (the fleet's own labels win a clash).
	infraLabels, infraAnnotations map[string]string
}

// fleetName is the name of the Deployment and Service of gw's fleet:
// "haptic-<gateway>", shortened with a hash of the whole name when it
// would not fit a DNS label (a Service name is one, and must start with
// a letter).
func fleetName(gw gatewayapi.Ref) string {
	const limit = 52 // room for the ReplicaSet's and pod's suffixes
	n := "haptic-" + gw.Name
	if len(n) <= limit {
		return n
	}
	return n[:limit-9] + "-" + shortHash(gw.Name)
}

func shortHash(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])[:8]
}

// configLabel is the value of [LabelFleetConfig] for the config
// namespace/name.
func configLabel(namespace, name string) string {
	v := namespace + "." + name
	if len(v) <= 63 {
		return v
	}
	return v[:54] + "-" + shortHash(v)
}

// newFleet returns gw's fleet. extraLabels (the config's podSelector
// labels) go on every object and pod, not in the selector: the
// Deployment's selector never changes.
func newFleet(gw gatewayapi.Ref, uid types.UID, config string, extraLabels map[string]string, cfg FleetConfig, agentPort int32, token string, listeners []gatewayapi.Listener) *fleet {
	name := fleetName(gw)
	sel := map[string]string{labelName: fleetPodName, labelInstance: name}
	lbl := maps.Clone(extraLabels)
	if lbl == nil {
		lbl = map[string]string{}
	}
	maps.Copy(lbl, sel)
	lbl[labelComponent] = fleetComponent
	lbl[labelManagedBy] = fleetManagedBy
	lbl[LabelFleetConfig] = config
	if len(gw.Name) <= 63 {
		lbl[LabelGatewayName] = gw.Name
	}
	return &fleet{gw: gw, uid: uid, name: name, selector: sel, labels: lbl, cfg: cfg.withDefaults(), agentPort: agentPort, token: token, listeners: listeners}
}

// podSelector selects the fleet's pods.
func (f *fleet) podSelector() labels.Selector { return labels.SelectorFromSet(f.selector) }

func (f *fleet) secretName() string { return f.name + "-agent-token" }

// meta is the metadata every object of the fleet carries: its labels,
// the Gateway annotation and the Gateway as controlling owner, so that
// deleting the Gateway deletes the fleet.
func (f *fleet) owner() *metav1ac.OwnerReferenceApplyConfiguration {
	return metav1ac.OwnerReference().WithAPIVersion("gateway.networking.k8s.io/v1").WithKind("Gateway").
		WithName(f.gw.Name).WithUID(f.uid).WithController(true)
}

func (f *fleet) annotations() map[string]string {
	a := maps.Clone(f.infraAnnotations)
	if a == nil {
		a = map[string]string{}
	}
	a[AnnotationFleetGateway] = f.gw.String()
	return a
}

// podAnnotations are the pods' annotations: the Gateway's infrastructure
// annotations; nil without any.
func (f *fleet) podAnnotations() map[string]string {
	if len(f.infraAnnotations) == 0 {
		return nil
	}
	return maps.Clone(f.infraAnnotations)
}

// objectLabels are the labels of every object and pod: the Gateway's
// infrastructure labels under the fleet's own.
func (f *fleet) objectLabels() map[string]string {
	l := maps.Clone(f.infraLabels)
	if l == nil {
		l = map[string]string{}
	}
	maps.Copy(l, f.labels)
	return l
}

// infrastructure returns the spec.infrastructure labels and annotations
// of a Gateway object.
func infrastructure(gw map[string]any) (labels, annotations map[string]string) {
	strs := func(path ...string) map[string]string {
		m, _, _ := unstructured.NestedStringMap(gw, path...)
		return m
	}
	return strs("spec", "infrastructure", "labels"), strs("spec", "infrastructure", "annotations")
}

// secret is the agents' token Secret.
func (f *fleet) secret() *corev1ac.SecretApplyConfiguration {
	return corev1ac.Secret(f.secretName(), f.gw.Namespace).
		WithLabels(f.objectLabels()).WithAnnotations(f.annotations()).WithOwnerReferences(f.owner()).
		WithType(corev1.SecretTypeOpaque).
		WithData(map[string][]byte{fleetTokenKey: []byte(f.token)})
}

// servicePorts are the listeners' ports, one per port and transport
// protocol, sorted: listeners that share a port (HTTPS listeners with
// different hostnames) share a Service port.
func (f *fleet) servicePorts() []*corev1ac.ServicePortApplyConfiguration {
	type key struct {
		port  int32
		proto corev1.Protocol
	}
	seen := map[key]bool{}
	var keys []key
	for _, l := range f.listeners {
		if l.Port < 1 || l.Port > 65535 {
			continue
		}
		proto := corev1.ProtocolTCP
		if strings.EqualFold(l.Protocol, "UDP") {
			proto = corev1.ProtocolUDP
		}
		k := key{l.Port, proto}
		if !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(a, b key) int {
		if a.port != b.port {
			return int(a.port - b.port)
		}
		return cmpString(string(a.proto), string(b.proto))
	})
	out := make([]*corev1ac.ServicePortApplyConfiguration, len(keys))
	for i, k := range keys {
		out[i] = corev1ac.ServicePort().WithName(strings.ToLower(string(k.proto)) + "-" + strconv.Itoa(int(k.port))).
			WithProtocol(k.proto).WithPort(k.port).WithTargetPort(intstr.FromInt32(k.port))
	}
	return out
}

// service is the fleet's Service; nil when no listener has a usable port
// (a Service needs one).
func (f *fleet) service() *corev1ac.ServiceApplyConfiguration {
	ports := f.servicePorts()
	if len(ports) == 0 {
		return nil
	}
	return corev1ac.Service(f.name, f.gw.Namespace).
		WithLabels(f.objectLabels()).WithAnnotations(f.annotations()).WithOwnerReferences(f.owner()).
		WithSpec(corev1ac.ServiceSpec().WithType(f.cfg.ServiceType).WithSelector(f.selector).WithPorts(ports...))
}

// deployment is the fleet's Deployment: the shape of the chart's HAProxy
// Deployment. Its pod template does not depend on the listeners (HAProxy
// binds what the plan says, the bootstrap config binds nothing), so a
// listener change never rolls the pods.
func (f *fleet) deployment() *appsv1ac.DeploymentApplyConfiguration {
	vol := corev1ac.VolumeMount().WithName("haproxy").WithMountPath(fleetBaseDir)
	sec := corev1ac.SecurityContext().WithRunAsNonRoot(true).WithAllowPrivilegeEscalation(false).
		WithReadOnlyRootFilesystem(true).WithCapabilities(corev1ac.Capabilities().WithDrop(corev1.Capability("ALL")))
	res := func(r corev1.ResourceRequirements) *corev1ac.ResourceRequirementsApplyConfiguration {
		ac := corev1ac.ResourceRequirements()
		if r.Requests != nil {
			ac.WithRequests(r.Requests)
		}
		if r.Limits != nil {
			ac.WithLimits(r.Limits)
		}
		return ac
	}
	agentPort := strconv.Itoa(int(f.agentPort))
	agentArgs := []string{"--base-dir=" + fleetBaseDir, "--master-socket=master.sock", "--stats-socket=stats.sock",
		"--listen=$(POD_IP):" + agentPort, "--token-file=/etc/haptic/token/" + fleetTokenKey}
	// The agents pace reloads by the config's minDeploymentInterval (0:
	// no pacing, which the agent spells as a negative interval).
	pacing := f.minReload
	if pacing <= 0 {
		pacing = -time.Nanosecond
	}
	agentArgs = append(agentArgs, "--min-reload-interval="+pacing.String())
	bootstrap := corev1ac.Container().WithName("bootstrap").WithImage(f.cfg.AgentImage).
		WithCommand(agentBinary).WithArgs("bootstrap", "--base-dir="+fleetBaseDir, "--stats-socket=stats.sock").
		WithWorkingDir(fleetBaseDir).WithVolumeMounts(vol).WithSecurityContext(sec).WithResources(res(f.cfg.AgentResources))
	haproxy := corev1ac.Container().WithName("haproxy").WithImage(f.cfg.HAProxyImage).
		WithArgs("-W", "-S", "unix@master.sock,mode,600", "-f", fleetBaseDir+"/haproxy.cfg").
		WithWorkingDir(fleetBaseDir).WithVolumeMounts(vol).WithSecurityContext(sec).WithResources(res(f.cfg.HAProxyResources))
	agent := corev1ac.Container().WithName("agent").WithImage(f.cfg.AgentImage).
		WithCommand(agentBinary).WithArgs(agentArgs...).
		WithWorkingDir(fleetBaseDir).
		WithEnv(corev1ac.EnvVar().WithName("POD_IP").WithValueFrom(corev1ac.EnvVarSource().WithFieldRef(corev1ac.ObjectFieldSelector().WithFieldPath("status.podIP")))).
		WithPorts(corev1ac.ContainerPort().WithName("agent").WithContainerPort(f.agentPort)).
		WithReadinessProbe(corev1ac.Probe().WithPeriodSeconds(5).
			WithHTTPGet(corev1ac.HTTPGetAction().WithPath("/readyz").WithPort(intstr.FromString("agent")))).
		WithVolumeMounts(vol, corev1ac.VolumeMount().WithName("token").WithMountPath("/etc/haptic/token").WithReadOnly(true)).
		WithSecurityContext(sec).WithResources(res(f.cfg.AgentResources))
	pod := corev1ac.PodSpec().
		WithAutomountServiceAccountToken(false).WithEnableServiceLinks(false).
		WithTerminationGracePeriodSeconds(30).
		WithSecurityContext(corev1ac.PodSecurityContext().
			WithRunAsUser(f.cfg.RunAsUser).WithRunAsGroup(f.cfg.RunAsUser).WithFSGroup(f.cfg.RunAsUser).WithRunAsNonRoot(true).
			WithSeccompProfile(corev1ac.SeccompProfile().WithType(corev1.SeccompProfileTypeRuntimeDefault)).
			// HAProxy binds the listeners' ports (80, 443) without
			// NET_BIND_SERVICE: a namespaced, "safe" sysctl.
			WithSysctls(corev1ac.Sysctl().WithName("net.ipv4.ip_unprivileged_port_start").WithValue("0"))).
		WithInitContainers(bootstrap).
		WithContainers(haproxy, agent).
		WithVolumes(
			// A tmpfs: the agent's writes and fsyncs, which every change
			// waits for, never wait on the node's disk.
			corev1ac.Volume().WithName("haproxy").WithEmptyDir(corev1ac.EmptyDirVolumeSource().WithMedium(corev1.StorageMediumMemory)),
			corev1ac.Volume().WithName("token").WithSecret(corev1ac.SecretVolumeSource().WithSecretName(f.secretName()).WithDefaultMode(0o440)),
		)
	return appsv1ac.Deployment(f.name, f.gw.Namespace).
		WithLabels(f.objectLabels()).WithAnnotations(f.annotations()).WithOwnerReferences(f.owner()).
		WithSpec(appsv1ac.DeploymentSpec().
			WithReplicas(f.cfg.Replicas).
			WithSelector(metav1ac.LabelSelector().WithMatchLabels(f.selector)).
			WithStrategy(appsv1ac.DeploymentStrategy().WithType("RollingUpdate").
				WithRollingUpdate(appsv1ac.RollingUpdateDeployment().WithMaxUnavailable(intstr.FromInt32(0)).WithMaxSurge(intstr.FromInt32(1)))).
			WithTemplate(corev1ac.PodTemplateSpec().WithLabels(f.objectLabels()).WithAnnotations(f.podAnnotations()).WithSpec(pod)))
}

// String names the fleet for logs.
func (f *fleet) String() string { return fmt.Sprintf("%s/%s", f.gw.Namespace, f.name) }
