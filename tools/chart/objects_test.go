package chart_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/kubernetes/scheme"

	v1alpha1 "github.com/haptic-io/haptic/api/v1alpha1"
)

// strict decodes like the API server with field validation Strict: an
// unknown or duplicate field is an error.
var strict = serializer.NewCodecFactory(scheme.Scheme, serializer.EnableStrict).UniversalDeserializer()

// objects are the typed objects of one render.
type objects struct {
	all    []runtime.Object
	config *v1alpha1.HAProxyTemplateConfig
}

// decode decodes every rendered document into its Go type: the
// HAProxyTemplateConfig with the API's own strict parser (which also
// validates the spec), every other object with client-go's scheme.
func decode(t *testing.T, r rendered) objects {
	t.Helper()
	var o objects
	for _, m := range r.Docs {
		apiVersion, kind := kindOf(t, m)
		if apiVersion == v1alpha1.GroupVersion.String() && kind == v1alpha1.KindHAProxyTemplateConfig {
			c, err := v1alpha1.ParseHAProxyTemplateConfig(m.Body)
			if err != nil {
				t.Fatalf("%s: %v", m.Source, err)
			}
			o.config = c
			o.all = append(o.all, c)
			continue
		}
		obj, _, err := strict.Decode(m.Body, nil, nil)
		if err != nil {
			t.Fatalf("%s: %s %s does not decode strictly into its type: %v", m.Source, apiVersion, kind, err)
		}
		o.all = append(o.all, obj)
	}
	if o.config == nil {
		t.Fatal("no HAProxyTemplateConfig rendered")
	}
	return o
}

// find returns the object of type T named name.
func find[T interface {
	runtime.Object
	GetName() string
}](t *testing.T, o objects, name string) T {
	t.Helper()
	for _, obj := range o.all {
		if x, ok := obj.(T); ok && x.GetName() == name {
			return x
		}
	}
	var zero T
	t.Fatalf("no %T named %s rendered", zero, name)
	return zero
}

// all returns every object of type T.
func all[T runtime.Object](o objects) []T {
	var out []T
	for _, obj := range o.all {
		if x, ok := obj.(T); ok {
			out = append(out, x)
		}
	}
	return out
}

func TestEveryObjectDecodesIntoItsType(t *testing.T) {
	for name, values := range valueSets(t) {
		t.Run(name, func(t *testing.T) {
			o := decode(t, render(t, values))
			var got []string
			for _, obj := range o.all {
				got = append(got, fmt.Sprintf("%T", obj))
			}
			slices.Sort(got)
			want := []string{
				"*v1.ClusterRole", "*v1.ClusterRoleBinding", "*v1.Deployment", "*v1.Deployment",
				"*v1.IngressClass", "*v1.PodDisruptionBudget", "*v1.PodDisruptionBudget",
				"*v1.Role", "*v1.RoleBinding", "*v1.Secret", "*v1.Service",
				"*v1.ServiceAccount", "*v1.ServiceAccount", "*v1alpha1.HAProxyTemplateConfig",
			}
			if name == "production" { // agent.existingSecret: the chart makes no Secret
				want = slices.DeleteFunc(want, func(s string) bool { return s == "*v1.Secret" })
				// The webhook: its Service, configuration and the RBAC of the
				// controller's own certificates.
				want = append(want, "*v1.ClusterRole", "*v1.ClusterRoleBinding", "*v1.Role", "*v1.RoleBinding", "*v1.Service",
					"*v1.ValidatingWebhookConfiguration")
				slices.Sort(want)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("rendered objects (-want +got):\n%s", diff)
			}
		})
	}
}

// TestEveryContainerIsLockedDown walks every container of every pod
// template, init containers included.
func TestEveryContainerIsLockedDown(t *testing.T) {
	for name, values := range valueSets(t) {
		t.Run(name, func(t *testing.T) {
			o := decode(t, render(t, values))
			deps := all[*appsv1.Deployment](o)
			if len(deps) != 2 {
				t.Fatalf("%d Deployments; want 2", len(deps))
			}
			for _, d := range deps {
				spec := d.Spec.Template.Spec
				psc := spec.SecurityContext
				if psc == nil || !isTrue(psc.RunAsNonRoot) || psc.RunAsUser == nil || *psc.RunAsUser != 65532 ||
					psc.RunAsGroup == nil || *psc.RunAsGroup != 65532 || psc.FSGroup == nil || *psc.FSGroup != 65532 {
					t.Errorf("%s: pod securityContext %+v; want runAsNonRoot, uid, gid and fsGroup 65532", d.Name, psc)
				}
				if psc == nil || psc.SeccompProfile == nil || psc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
					t.Errorf("%s: pod seccompProfile is not RuntimeDefault", d.Name)
				}
				if spec.HostNetwork || spec.HostPID || spec.HostIPC {
					t.Errorf("%s: shares a host namespace", d.Name)
				}
				containers := append(slices.Clone(spec.InitContainers), spec.Containers...)
				for _, c := range containers {
					checkContainer(t, d.Name+"/"+c.Name, c)
				}
				for _, v := range spec.Volumes {
					if v.HostPath != nil {
						t.Errorf("%s: hostPath volume %s", d.Name, v.Name)
					}
				}
			}
		})
	}
}

func checkContainer(t *testing.T, where string, c corev1.Container) {
	t.Helper()
	sc := c.SecurityContext
	if sc == nil {
		t.Errorf("%s: no securityContext", where)
		return
	}
	if !isTrue(sc.RunAsNonRoot) {
		t.Errorf("%s: runAsNonRoot is not true", where)
	}
	if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
		t.Errorf("%s: allowPrivilegeEscalation is not false", where)
	}
	if isTrue(sc.Privileged) {
		t.Errorf("%s: privileged", where)
	}
	if !isTrue(sc.ReadOnlyRootFilesystem) {
		t.Errorf("%s: readOnlyRootFilesystem is not true", where)
	}
	if sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) || len(sc.Capabilities.Add) != 0 {
		t.Errorf("%s: capabilities %+v; want drop [ALL] and none added", where, sc.Capabilities)
	}
	if sc.SeccompProfile == nil || sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("%s: seccompProfile is not RuntimeDefault", where)
	}
	if sc.RunAsUser != nil && *sc.RunAsUser == 0 {
		t.Errorf("%s: runs as root", where)
	}
	if c.Resources.Requests.Cpu().IsZero() || c.Resources.Requests.Memory().IsZero() {
		t.Errorf("%s: no cpu or memory request", where)
	}
	for _, p := range c.Ports {
		if p.ContainerPort < 1024 {
			t.Errorf("%s: port %s is privileged (%d)", where, p.Name, p.ContainerPort)
		}
	}
}

func isTrue(b *bool) bool { return b != nil && *b }

// The HAProxy pods never talk to the API server: no token in them.
func TestHAProxyPodsMountNoServiceAccountToken(t *testing.T) {
	o := decode(t, render(t, nil))
	d := find[*appsv1.Deployment](t, o, "haptic-haproxy")
	if a := d.Spec.Template.Spec.AutomountServiceAccountToken; a == nil || *a {
		t.Errorf("haproxy pod automountServiceAccountToken = %v; want false", a)
	}
	sa := find[*corev1.ServiceAccount](t, o, d.Spec.Template.Spec.ServiceAccountName)
	if a := sa.AutomountServiceAccountToken; a == nil || *a {
		t.Errorf("ServiceAccount %s automountServiceAccountToken = %v; want false", sa.Name, a)
	}
	for _, b := range all[*rbacv1.RoleBinding](o) {
		for _, s := range b.Subjects {
			if s.Name == sa.Name {
				t.Errorf("the HAProxy pods' ServiceAccount is bound by %s", b.Name)
			}
		}
	}
	// The token Secret is mounted in the agent container only.
	for _, c := range d.Spec.Template.Spec.Containers {
		mounts := false
		for _, m := range c.VolumeMounts {
			mounts = mounts || m.Name == "token"
		}
		if mounts != (c.Name == "agent") {
			t.Errorf("container %s mounts the agent token: %v", c.Name, mounts)
		}
	}
}

func TestControllerDeployment(t *testing.T) {
	o := decode(t, render(t, nil))
	d := find[*appsv1.Deployment](t, o, "haptic-controller")
	if r := d.Spec.Replicas; r == nil || *r != 2 {
		t.Errorf("replicas = %v; want 2", r)
	}
	spec := d.Spec.Template.Spec
	aff := spec.Affinity
	if aff == nil || aff.PodAntiAffinity == nil || len(aff.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution) != 1 ||
		len(aff.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution) != 0 {
		t.Errorf("affinity %+v; want one preferred podAntiAffinity term", aff)
	}
	c := spec.Containers[0]
	if !slices.Contains(c.Args, "--leader-elect=true") || !slices.Contains(c.Args, "--config-name=haptic") {
		t.Errorf("args %q; want --leader-elect=true and --config-name=haptic", c.Args)
	}
	env := map[string]corev1.EnvVar{}
	for _, e := range c.Env {
		env[e.Name] = e
	}
	for name, path := range map[string]string{"POD_NAME": "metadata.name", "POD_NAMESPACE": "metadata.namespace"} {
		if e := env[name]; e.ValueFrom == nil || e.ValueFrom.FieldRef == nil || e.ValueFrom.FieldRef.FieldPath != path {
			t.Errorf("env %s = %+v; want the downward API's %s", name, e, path)
		}
	}
	checkGOMEMLIMIT(t, "controller", c)
	want := corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("512Mi")},
		Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("512Mi")},
	}
	if diff := cmp.Diff(want.Requests.Cpu().String(), c.Resources.Requests.Cpu().String()); diff != "" {
		t.Errorf("cpu request (-want +got):\n%s", diff)
	}
	if !c.Resources.Requests.Memory().Equal(*want.Requests.Memory()) || !c.Resources.Limits.Memory().Equal(*want.Limits.Memory()) {
		t.Errorf("memory %v / %v; want request = limit = 512Mi", c.Resources.Requests.Memory(), c.Resources.Limits.Memory())
	}
	if _, ok := c.Resources.Limits[corev1.ResourceCPU]; ok {
		t.Error("the controller has a CPU limit; want none")
	}
	for probe, path := range map[*corev1.Probe]string{c.ReadinessProbe: "/readyz", c.LivenessProbe: "/healthz"} {
		if probe == nil || probe.HTTPGet == nil || probe.HTTPGet.Path != path || probe.HTTPGet.Port.String() != "metrics" {
			t.Errorf("probe %+v; want GET %s on the metrics port", probe, path)
		}
	}
}

// checkGOMEMLIMIT: the Go runtime's soft limit is the container's memory
// limit as a plain byte count (TestGoReadsAByteCountGOMEMLIMIT).
func checkGOMEMLIMIT(t *testing.T, container string, c corev1.Container) {
	t.Helper()
	for _, e := range c.Env {
		if e.Name != "GOMEMLIMIT" {
			continue
		}
		ref := e.ValueFrom.ResourceFieldRef
		if ref == nil || ref.Resource != "limits.memory" || ref.ContainerName != container || !ref.Divisor.Equal(resource.MustParse("1")) {
			t.Errorf("%s: GOMEMLIMIT from %+v; want limits.memory of itself, divisor 1", container, ref)
		}
		return
	}
	t.Errorf("%s: no GOMEMLIMIT", container)
}

func TestHAProxyDeploymentIsTheE2EShape(t *testing.T) {
	o := decode(t, render(t, nil))
	d := find[*appsv1.Deployment](t, o, "haptic-haproxy")
	spec := d.Spec.Template.Spec
	var names []string
	for _, c := range append(slices.Clone(spec.InitContainers), spec.Containers...) {
		names = append(names, c.Name)
		if c.WorkingDir != "/var/lib/haptic" {
			t.Errorf("%s: workingDir %q; want /var/lib/haptic (relative socket paths)", c.Name, c.WorkingDir)
		}
		if !slices.ContainsFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool { return m.Name == "haproxy" && m.MountPath == "/var/lib/haptic" }) {
			t.Errorf("%s: does not mount the shared emptyDir at /var/lib/haptic", c.Name)
		}
	}
	if diff := cmp.Diff([]string{"bootstrap", "haproxy", "agent"}, names); diff != "" {
		t.Errorf("containers (-want +got):\n%s", diff)
	}
	wantArgs := map[string][]string{
		"bootstrap": {"bootstrap", "--base-dir=/var/lib/haptic", "--stats-socket=stats.sock", "--bind=0.0.0.0:8080"},
		"haproxy":   {"-W", "-S", "unix@master.sock,mode,600", "-f", "/var/lib/haptic/haproxy.cfg"},
		"agent": {"--base-dir=/var/lib/haptic", "--master-socket=master.sock", "--stats-socket=stats.sock",
			"--listen=$(POD_IP):5555", "--token-file=/etc/haptic/token/token", "--ready-after-plan", "--log-level=info"},
	}
	// The agent and its bootstrap run haptic-agent, which the Dockerfile
	// puts there (TestDockerfileMatchesTheChart); HAProxy its entrypoint.
	wantCommand := map[string][]string{"bootstrap": {"/usr/local/bin/haptic-agent"}, "agent": {"/usr/local/bin/haptic-agent"}}
	for _, c := range append(slices.Clone(spec.InitContainers), spec.Containers...) {
		if diff := cmp.Diff(wantArgs[c.Name], c.Args); diff != "" {
			t.Errorf("%s args (-want +got):\n%s", c.Name, diff)
		}
		if diff := cmp.Diff(wantCommand[c.Name], c.Command); diff != "" {
			t.Errorf("%s command (-want +got):\n%s", c.Name, diff)
		}
	}
	agent := spec.Containers[1]
	if p := agent.ReadinessProbe; p == nil || p.HTTPGet == nil || p.HTTPGet.Path != "/readyz" || p.HTTPGet.Port.String() != "agent" {
		t.Errorf("agent readiness %+v; want GET /readyz on the agent port", p)
	}
	checkGOMEMLIMIT(t, "agent", agent)
	if l := spec.Containers[0].Lifecycle; l == nil || l.PreStop == nil || l.PreStop.Sleep == nil || l.PreStop.Sleep.Seconds != 5 {
		t.Errorf("haproxy preStop %+v; want the sleep action, 5 s (Kubernetes %s)", l, kubeVersion.Version)
	}
	if images := []string{spec.Containers[0].Image, agent.Image}; !slices.Equal(images, []string{"docker.io/haproxytech/haproxy-debian:3.4", "ghcr.io/haptic-io/haptic:0.1.0"}) {
		t.Errorf("images %q", images)
	}
	var tokenVol *corev1.SecretVolumeSource
	for _, v := range spec.Volumes {
		if v.Name == "token" {
			tokenVol = v.Secret
		}
	}
	if tokenVol == nil || tokenVol.SecretName != "haptic-agent-token" || tokenVol.DefaultMode == nil || *tokenVol.DefaultMode != 0o440 {
		t.Errorf("token volume %+v; want Secret haptic-agent-token, mode 0440 (owner and fsGroup)", tokenVol)
	}
}

// The HAProxy pods work on a tmpfs unless haproxy.workDir says otherwise,
// with the sizeLimit given.
func TestHAProxyWorkDirIsATmpfsByDefault(t *testing.T) {
	size := resource.MustParse("64Mi")
	for _, tc := range []struct {
		name   string
		values map[string]any
		want   corev1.EmptyDirVolumeSource
	}{
		{"default", nil, corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory}},
		{"sized", map[string]any{"haproxy": map[string]any{"workDir": map[string]any{"sizeLimit": "64Mi"}}},
			corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory, SizeLimit: &size}},
		{"on the node's disk", map[string]any{"haproxy": map[string]any{"workDir": map[string]any{"medium": ""}}}, corev1.EmptyDirVolumeSource{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := find[*appsv1.Deployment](t, decode(t, render(t, tc.values)), "haptic-haproxy")
			var got *corev1.EmptyDirVolumeSource
			for _, v := range d.Spec.Template.Spec.Volumes {
				if v.Name == "haproxy" {
					got = v.EmptyDir
				}
			}
			if got == nil {
				t.Fatal("no emptyDir volume haproxy")
			}
			if diff := cmp.Diff(tc.want, *got); diff != "" {
				t.Errorf("emptyDir (-want +got):\n%s", diff)
			}
		})
	}
}

// The Service maps the well-known ports onto HAProxy's unprivileged ones.
func TestServiceMapsWellKnownPortsOntoUnprivilegedOnes(t *testing.T) {
	for _, typ := range []string{"LoadBalancer", "NodePort", "ClusterIP"} {
		t.Run(typ, func(t *testing.T) {
			o := decode(t, render(t, map[string]any{"service": map[string]any{"type": typ}}))
			s := find[*corev1.Service](t, o, "haptic-haproxy")
			if string(s.Spec.Type) != typ {
				t.Errorf("type %s; want %s", s.Spec.Type, typ)
			}
			var got []string
			for _, p := range s.Spec.Ports {
				got = append(got, fmt.Sprintf("%s %d->%s", p.Name, p.Port, p.TargetPort.String()))
			}
			if diff := cmp.Diff([]string{"http 80->http", "https 443->https"}, got); diff != "" {
				t.Errorf("ports (-want +got):\n%s", diff)
			}
			d := find[*appsv1.Deployment](t, o, "haptic-haproxy")
			ports := map[string]int32{}
			for _, p := range d.Spec.Template.Spec.Containers[0].Ports {
				ports[p.Name] = p.ContainerPort
			}
			if diff := cmp.Diff(map[string]int32{"http": 8080, "https": 8443, "stats": 8404}, ports); diff != "" {
				t.Errorf("haproxy container ports (-want +got):\n%s", diff)
			}
		})
	}
}

// The config the chart installs points at its own pods and Secret and
// listens where the pod and the Service expect.
func TestConfigMatchesTheInstalledObjects(t *testing.T) {
	o := decode(t, render(t, nil))
	c := o.config
	if c.Name != "haptic" || c.Namespace != namespace {
		t.Errorf("config %s/%s; want %s/haptic", c.Namespace, c.Name, namespace)
	}
	d := find[*appsv1.Deployment](t, o, "haptic-haproxy")
	if diff := cmp.Diff(d.Spec.Selector.MatchLabels, c.Spec.PodSelector.MatchLabels); diff != "" {
		t.Errorf("podSelector vs the HAProxy Deployment's selector (-deployment +config):\n%s", diff)
	}
	sec := find[*corev1.Secret](t, o, "haptic-agent-token")
	if ref := c.Spec.Agent.TokenSecretRef; ref == nil || ref.Name != sec.Name || ref.Key != "token" || c.Spec.Agent.Port != 5555 {
		t.Errorf("agent %+v; want port 5555, tokenSecretRef %s/token", c.Spec.Agent, sec.Name)
	}
	if len(sec.Data["token"]) != 48 {
		t.Errorf("generated token is %d bytes; want 48", len(sec.Data["token"]))
	}
	cfg, err := c.Spec.TemplatingConfig()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"httpAddress": "0.0.0.0", "httpPort": int64(8080), "httpsPort": int64(8443),
		"statsAddress": "0.0.0.0", "statsPort": int64(8404), "statsSocket": "stats.sock",
		"hardStopAfter": "30s", "ingressClass": "haptic", "ingressClassDefault": false,
	}
	if diff := cmp.Diff(want, cfg.ExtraContext); diff != "" {
		t.Errorf("extraContext (-want +got):\n%s", diff)
	}
	ic := find[*networkingv1.IngressClass](t, o, "haptic")
	if ic.Spec.Controller != "haproxy-haptic.org/ingress-controller" || ic.Annotations["ingressclass.kubernetes.io/is-default-class"] != "" {
		t.Errorf("IngressClass %+v; want controller haproxy-haptic.org/ingress-controller, not the default", ic)
	}
}

func TestNbthreadFollowsTheCPULimit(t *testing.T) {
	for cpu, want := range map[string]any{"": nil, "1": int64(1), "2": int64(2), "1.5": int64(2), "1500m": int64(2), "250m": int64(1), "4000m": int64(4)} {
		t.Run("cpu="+cpu, func(t *testing.T) {
			limits := map[string]any{}
			if cpu != "" {
				limits["cpu"] = cpu
			}
			o := decode(t, render(t, map[string]any{"haproxy": map[string]any{"resources": map[string]any{"limits": limits}}}))
			cfg, err := o.config.Spec.TemplatingConfig()
			if err != nil {
				t.Fatal(err)
			}
			if got := cfg.ExtraContext["nbthread"]; got != want {
				t.Errorf("nbthread = %v; want %v", got, want)
			}
		})
	}
}

func TestPodDisruptionBudgetsOnlyWithMoreThanOneReplica(t *testing.T) {
	for _, replicas := range []int{1, 2, 3} {
		t.Run(fmt.Sprint("replicas=", replicas), func(t *testing.T) {
			o := decode(t, render(t, map[string]any{
				"controller": map[string]any{"replicas": replicas},
				"haproxy":    map[string]any{"replicas": replicas},
			}))
			pdbs := all[*policyv1.PodDisruptionBudget](o)
			if replicas == 1 {
				if len(pdbs) != 0 {
					t.Errorf("%d PodDisruptionBudgets with one replica; want none", len(pdbs))
				}
				return
			}
			if len(pdbs) != 2 {
				t.Fatalf("%d PodDisruptionBudgets; want 2", len(pdbs))
			}
			for _, p := range pdbs {
				if p.Spec.MinAvailable == nil || p.Spec.MinAvailable.IntValue() != 1 {
					t.Errorf("%s minAvailable %v; want 1", p.Name, p.Spec.MinAvailable)
				}
			}
		})
	}
}

// The controller writes nothing cluster-wide but status subresources and
// Events; what else it writes is in its own namespace.
func TestControllerRBACIsLeastPrivilege(t *testing.T) {
	o := decode(t, render(t, nil))
	cr := find[*rbacv1.ClusterRole](t, o, "haptic-controller")
	read := []string{"get", "list", "watch"}
	var got []string
	for _, r := range cr.Rules {
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				got = append(got, fmt.Sprintf("%s/%s %s", g, res, strings.Join(r.Verbs, ",")))
				write := !isSubset(r.Verbs, read)
				if write && !strings.HasSuffix(res, "/status") && res != "events" {
					t.Errorf("ClusterRole writes %s/%s (%v)", g, res, r.Verbs)
				}
				if slices.Contains(r.Verbs, "*") || slices.Contains(r.Verbs, "delete") || res == "*" {
					t.Errorf("ClusterRole rule %+v: wildcard or delete", r)
				}
			}
		}
	}
	slices.Sort(got)
	want := []string{
		"/events create,patch", "/secrets get,list,watch", "/services get,list,watch",
		"discovery.k8s.io/endpointslices get,list,watch", "events.k8s.io/events create,patch",
		"networking.k8s.io/ingressclasses get,list,watch", "networking.k8s.io/ingresses get,list,watch",
		"networking.k8s.io/ingresses/status patch,update",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ClusterRole rules (-want +got):\n%s", diff)
	}
	role := find[*rbacv1.Role](t, o, "haptic-controller")
	if role.Namespace != namespace {
		t.Errorf("Role in %q; want the release namespace", role.Namespace)
	}
	got = nil
	for _, r := range role.Rules {
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				got = append(got, fmt.Sprintf("%s/%s %s", g, res, strings.Join(r.Verbs, ",")))
			}
		}
	}
	slices.Sort(got)
	want = []string{
		"/pods list,watch", "coordination.k8s.io/leases get,create,update",
		"haproxy-haptic.org/haproxycfgs get,list,create,update,patch", "haproxy-haptic.org/haproxycfgs/status patch,update",
		"haproxy-haptic.org/haproxytemplateconfigs get,list,watch", "haproxy-haptic.org/haproxytemplateconfigs/status patch,update",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Role rules (-want +got):\n%s", diff)
	}
	sa := find[*corev1.ServiceAccount](t, o, "haptic-controller")
	for _, b := range []struct {
		name     string
		subjects []rbacv1.Subject
	}{
		{"ClusterRoleBinding", find[*rbacv1.ClusterRoleBinding](t, o, "haptic-controller").Subjects},
		{"RoleBinding", find[*rbacv1.RoleBinding](t, o, "haptic-controller").Subjects},
	} {
		want := []rbacv1.Subject{{Kind: "ServiceAccount", Name: sa.Name, Namespace: namespace}}
		if diff := cmp.Diff(want, b.subjects); diff != "" {
			t.Errorf("%s subjects (-want +got):\n%s", b.name, diff)
		}
	}
}

func isSubset(verbs, of []string) bool {
	for _, v := range verbs {
		if !slices.Contains(of, v) {
			return false
		}
	}
	return true
}
