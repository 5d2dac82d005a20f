package chart_test

import (
	"slices"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"
)

// webhookValues enables the webhook for every kind.
func webhookValues(certManager bool) map[string]any {
	return map[string]any{"webhook": map[string]any{
		"enabled":     true,
		"ingresses":   map[string]any{"enabled": true},
		"httpRoutes":  map[string]any{"enabled": true},
		"certManager": map[string]any{"enabled": certManager},
	}}
}

func argValue(args []string, flag string) (string, bool) {
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, flag+"="); ok {
			return v, true
		}
	}
	return "", false
}

func TestWebhookIsOffByDefault(t *testing.T) {
	o := decode(t, render(t, nil))
	if n := len(all[*admissionregistrationv1.ValidatingWebhookConfiguration](o)); n != 0 {
		t.Errorf("%d ValidatingWebhookConfigurations by default; want none", n)
	}
	c := find[*appsv1.Deployment](t, o, "haptic-controller").Spec.Template.Spec.Containers[0]
	if _, ok := argValue(c.Args, "--webhook-listen"); ok {
		t.Errorf("the controller serves a webhook by default: %q", c.Args)
	}
}

func TestWebhookConfigurationReachesTheControllers(t *testing.T) {
	o := decode(t, render(t, webhookValues(false)))
	vwc := find[*admissionregistrationv1.ValidatingWebhookConfiguration](t, o, "haptic-webhook")
	type want struct {
		group, resource string
		policy          admissionregistrationv1.FailurePolicyType
	}
	wants := map[string]want{
		"haproxytemplateconfigs.haproxy-haptic.org": {"haproxy-haptic.org", "haproxytemplateconfigs", admissionregistrationv1.Fail},
		"ingresses.haproxy-haptic.org":              {"networking.k8s.io", "ingresses", admissionregistrationv1.Ignore},
		"httproutes.haproxy-haptic.org":             {"gateway.networking.k8s.io", "httproutes", admissionregistrationv1.Ignore},
	}
	if len(vwc.Webhooks) != len(wants) {
		t.Fatalf("%d webhooks; want %d", len(vwc.Webhooks), len(wants))
	}
	svc := find[*corev1.Service](t, o, "haptic-webhook")
	d := find[*appsv1.Deployment](t, o, "haptic-controller")
	for _, w := range vwc.Webhooks {
		wt, ok := wants[w.Name]
		if !ok {
			t.Errorf("unexpected webhook %s", w.Name)
			continue
		}
		if w.FailurePolicy == nil || *w.FailurePolicy != wt.policy {
			t.Errorf("%s: failurePolicy %v; want %s", w.Name, w.FailurePolicy, wt.policy)
		}
		// Well under the apiserver's 30 s, so that a slow review is the
		// failure policy's to decide, not a timed-out request.
		if w.TimeoutSeconds == nil || *w.TimeoutSeconds > 15 {
			t.Errorf("%s: timeoutSeconds %v; want at most 15", w.Name, w.TimeoutSeconds)
		}
		if w.SideEffects == nil || *w.SideEffects != admissionregistrationv1.SideEffectClassNone {
			t.Errorf("%s: sideEffects %v; want None", w.Name, w.SideEffects)
		}
		if len(w.Rules) != 1 || !slices.Equal(w.Rules[0].APIGroups, []string{wt.group}) || !slices.Equal(w.Rules[0].Resources, []string{wt.resource}) ||
			!slices.Equal(w.Rules[0].Operations, []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update}) {
			t.Errorf("%s: rules %+v; want CREATE and UPDATE of %s/%s", w.Name, w.Rules, wt.group, wt.resource)
		}
		s := w.ClientConfig.Service
		if s == nil || s.Name != svc.Name || s.Namespace != namespace || s.Path == nil || *s.Path != "/validate" || s.Port == nil || *s.Port != 443 {
			t.Errorf("%s: clientConfig %+v; want the Service %s:443/validate", w.Name, w.ClientConfig, svc.Name)
		}
		if len(w.ClientConfig.CABundle) != 0 {
			t.Errorf("%s: caBundle rendered; the controller patches it (a rendered one would be reset by every upgrade)", w.Name)
		}
	}
	for _, w := range vwc.Webhooks {
		if w.Name != "haproxytemplateconfigs.haproxy-haptic.org" {
			continue
		}
		if got := w.NamespaceSelector.MatchLabels["kubernetes.io/metadata.name"]; got != namespace {
			t.Errorf("the config's webhook selects namespace %q; want the release's", got)
		}
		if len(w.MatchConditions) != 1 || !strings.Contains(w.MatchConditions[0].Expression, `"haptic"`) {
			t.Errorf("the config's webhook matchConditions %+v; want the config's name", w.MatchConditions)
		}
	}
	// The Service selects the controller pods and targets their webhook port.
	for k, v := range svc.Spec.Selector {
		if d.Spec.Template.Labels[k] != v {
			t.Errorf("Service selector %s=%s does not select the controller pods", k, v)
		}
	}
	c := d.Spec.Template.Spec.Containers[0]
	port := -1
	for _, p := range c.Ports {
		if p.Name == svc.Spec.Ports[0].TargetPort.String() {
			port = int(p.ContainerPort)
		}
	}
	if listen, _ := argValue(c.Args, "--webhook-listen"); port < 0 || listen != ":"+svc.Spec.Ports[0].TargetPort.String() && listen != ":9443" || port != 9443 {
		t.Errorf("Service targets %s, container ports %+v, --webhook-listen=%s; want all on 9443", svc.Spec.Ports[0].TargetPort.String(), c.Ports, listen)
	}
	if v, _ := argValue(c.Args, "--webhook-configuration"); v != vwc.Name {
		t.Errorf("--webhook-configuration=%s; want %s", v, vwc.Name)
	}
	if v, _ := argValue(c.Args, "--webhook-service"); v != svc.Name {
		t.Errorf("--webhook-service=%s; want %s", v, svc.Name)
	}

	// RBAC: that one configuration and that one Secret, by name.
	secret, _ := argValue(c.Args, "--webhook-secret")
	cr := find[*rbacv1.ClusterRole](t, o, "haptic-controller-webhook")
	if len(cr.Rules) != 1 || !slices.Equal(cr.Rules[0].ResourceNames, []string{vwc.Name}) || !slices.Contains(cr.Rules[0].Verbs, "patch") {
		t.Errorf("ClusterRole haptic-controller-webhook %+v; want get/patch on %s by name", cr.Rules, vwc.Name)
	}
	role := find[*rbacv1.Role](t, o, "haptic-controller-webhook")
	for _, r := range role.Rules {
		if !slices.Equal(r.Verbs, []string{"create"}) && !slices.Equal(r.ResourceNames, []string{secret}) {
			t.Errorf("Role rule %+v; want only the Secret %s by name (and create)", r, secret)
		}
		if !slices.Equal(r.Resources, []string{"secrets"}) {
			t.Errorf("Role rule %+v on other resources than secrets", r)
		}
	}
	for _, name := range []string{"haptic-controller-webhook"} {
		if s := find[*rbacv1.RoleBinding](t, o, name).Subjects; len(s) != 1 || s[0].Name != d.Spec.Template.Spec.ServiceAccountName {
			t.Errorf("RoleBinding %s subjects %+v; want the controller's ServiceAccount", name, s)
		}
	}
}

func TestWebhookWithCertManager(t *testing.T) {
	r := render(t, webhookValues(true))
	docs := map[string]map[string]any{}
	for _, m := range r.Docs {
		var obj map[string]any
		if err := yaml.Unmarshal(m.Body, &obj); err != nil {
			t.Fatal(err)
		}
		meta, _ := obj["metadata"].(map[string]any)
		docs[obj["kind"].(string)+"/"+meta["name"].(string)] = obj
	}
	vwc := docs["ValidatingWebhookConfiguration/haptic-webhook"]
	ann, _ := vwc["metadata"].(map[string]any)["annotations"].(map[string]any)
	if got := ann["cert-manager.io/inject-ca-from"]; got != namespace+"/haptic-webhook" {
		t.Errorf("inject-ca-from = %v; want %s/haptic-webhook", got, namespace)
	}
	cert := docs["Certificate/haptic-webhook"]
	if cert == nil {
		t.Fatal("no Certificate haptic-webhook")
	}
	spec := cert["spec"].(map[string]any)
	if dns := spec["dnsNames"].([]any); !slices.Contains(dns, any("haptic-webhook."+namespace+".svc")) {
		t.Errorf("Certificate dnsNames %v; want the Service's name", dns)
	}
	if ref := spec["issuerRef"].(map[string]any); ref["name"] != "haptic-webhook" || docs["Issuer/haptic-webhook"] == nil {
		t.Errorf("issuerRef %v; want the chart's self-signed Issuer haptic-webhook", ref)
	}
	for k := range docs {
		if strings.HasSuffix(k, "/haptic-controller-webhook") {
			t.Errorf("%s rendered: with cert-manager the controller patches nothing", k)
		}
	}
	var d appsv1.Deployment
	for _, m := range r.Docs {
		if strings.HasSuffix(m.Source, "controller-deployment.yaml") {
			if err := yaml.Unmarshal(m.Body, &d); err != nil {
				t.Fatal(err)
			}
		}
	}
	c := d.Spec.Template.Spec.Containers[0]
	dir, ok := argValue(c.Args, "--webhook-cert-dir")
	if _, patches := argValue(c.Args, "--webhook-configuration"); !ok || patches {
		t.Fatalf("args %q; want --webhook-cert-dir and no --webhook-configuration", c.Args)
	}
	mounted := false
	for _, m := range c.VolumeMounts {
		for _, v := range d.Spec.Template.Spec.Volumes {
			if v.Name == m.Name && m.MountPath == dir && v.Secret != nil && v.Secret.SecretName == spec["secretName"] {
				mounted = true
			}
		}
	}
	if !mounted {
		t.Errorf("the Certificate's Secret %v is not mounted at --webhook-cert-dir %s", spec["secretName"], dir)
	}
}

// TestCheckerContainerHoldsNoCredentials: haproxy -c runs user templates,
// which may name any file; the container that runs it must have none of
// the controller's credentials to read (the ingress-nginx CVE-2025-1974
// class). cmd/haptic's TestCheckerCannotReadTheControllersToken shows the
// same against real HAProxy.
func TestCheckerContainerHoldsNoCredentials(t *testing.T) {
	for name, values := range map[string]map[string]any{"default": nil, "webhook": webhookValues(true)} {
		t.Run(name, func(t *testing.T) {
			r := render(t, values)
			var d appsv1.Deployment
			for _, m := range r.Docs {
				if strings.HasSuffix(m.Source, "controller-deployment.yaml") {
					if err := yaml.Unmarshal(m.Body, &d); err != nil {
						t.Fatal(err)
					}
				}
			}
			spec := d.Spec.Template.Spec
			if a := spec.AutomountServiceAccountToken; a == nil || *a {
				t.Fatalf("controller pod automountServiceAccountToken = %v; want false (the token is mounted in the controller container alone)", a)
			}
			vols := map[string]corev1.Volume{}
			for _, v := range spec.Volumes {
				vols[v.Name] = v
			}
			var controller, checker *corev1.Container
			for i := range spec.Containers {
				switch spec.Containers[i].Name {
				case "controller":
					controller = &spec.Containers[i]
				case "checker":
					checker = &spec.Containers[i]
				}
			}
			if controller == nil || checker == nil {
				t.Fatalf("containers %v; want controller and checker", spec.Containers)
			}
			tokenMounted := false
			for _, m := range controller.VolumeMounts {
				if m.MountPath == "/var/run/secrets/kubernetes.io/serviceaccount" && vols[m.Name].Projected != nil {
					tokenMounted = true
				}
			}
			if !tokenMounted {
				t.Error("the controller container does not mount its service-account token")
			}
			for _, m := range checker.VolumeMounts {
				v := vols[m.Name]
				if v.EmptyDir == nil {
					t.Errorf("checker mounts %s (%+v); want only emptyDirs", m.Name, v.VolumeSource)
				}
			}
			if len(checker.EnvFrom) != 0 {
				t.Errorf("checker envFrom %+v; want none", checker.EnvFrom)
			}
			for _, e := range checker.Env {
				if e.ValueFrom != nil && (e.ValueFrom.SecretKeyRef != nil || e.ValueFrom.ConfigMapKeyRef != nil) {
					t.Errorf("checker env %s comes from a Secret or ConfigMap", e.Name)
				}
			}
			sock, _ := argValue(controller.Args, "--checker-socket")
			served, _ := argValue(checker.Args, "--socket")
			if sock == "" || sock != served {
				t.Errorf("controller --checker-socket=%q, checker --socket=%q; want the same path", sock, served)
			}
			shared := false
			for _, cm := range controller.VolumeMounts {
				for _, km := range checker.VolumeMounts {
					if cm.Name == km.Name && cm.MountPath == km.MountPath && strings.HasPrefix(sock, cm.MountPath+"/") {
						shared = true
					}
				}
			}
			if !shared {
				t.Errorf("the socket %s is not in a volume both containers mount at the same path", sock)
			}
			checkGOMEMLIMIT(t, "checker", *checker)
		})
	}
}
