package cluster

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/haptic-io/haptic/gatewayapi"
)

func TestFleetNamesFitADNSLabelAndStayDistinct(t *testing.T) {
	short := gatewayapi.Ref{Namespace: "infra", Name: "same-namespace"}
	if got := fleetName(short); got != "haptic-same-namespace" {
		t.Errorf("fleetName(%v) = %q", short, got)
	}
	long1 := gatewayapi.Ref{Namespace: "infra", Name: strings.Repeat("a", 100) + "1"}
	long2 := gatewayapi.Ref{Namespace: "infra", Name: strings.Repeat("a", 100) + "2"}
	n1, n2 := fleetName(long1), fleetName(long2)
	if len(n1) > 52 || n1 == n2 || !strings.HasPrefix(n1, "haptic-") {
		t.Errorf("long names: %q, %q; want distinct, at most 52 bytes, haptic-…", n1, n2)
	}
	f := newFleet(long1, "uid-1", "cfg", nil, FleetConfig{}, 5555, "t", nil)
	if _, ok := f.labels[LabelGatewayName]; ok {
		t.Error("a Gateway name longer than a label value is in a label")
	}
	if got := configLabel("ns", strings.Repeat("c", 80)); len(got) > 63 {
		t.Errorf("configLabel: %d bytes, want at most 63", len(got))
	}
}

func encode(t *testing.T, v any) map[string]any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestFleetServiceHasOnePortPerListenerPortAndProtocol: HTTPS listeners
// on one port share a Service port; a UDP listener gets its own.
func TestFleetServiceHasOnePortPerListenerPortAndProtocol(t *testing.T) {
	gw := gatewayapi.Ref{Namespace: "infra", Name: "gw"}
	f := newFleet(gw, "uid-1", "cfg", nil, FleetConfig{ServiceType: corev1.ServiceTypeClusterIP}, 5555, "t", []gatewayapi.Listener{
		{Name: "https-a", Port: 443, Protocol: "HTTPS"}, {Name: "http", Port: 80, Protocol: "HTTP"},
		{Name: "https-b", Port: 443, Protocol: "HTTPS"}, {Name: "dns", Port: 53, Protocol: "UDP"}, {Name: "bad", Port: 0, Protocol: "HTTP"},
	})
	svc := encode(t, f.service())
	var got []string
	for _, p := range svc["spec"].(map[string]any)["ports"].([]any) {
		m := p.(map[string]any)
		got = append(got, m["name"].(string)+" "+m["protocol"].(string))
	}
	if diff := cmp.Diff([]string{"udp-53 UDP", "tcp-80 TCP", "tcp-443 TCP"}, got); diff != "" {
		t.Errorf("service ports (-want +got):\n%s", diff)
	}
	if sel := svc["spec"].(map[string]any)["selector"]; !cmp.Equal(sel, map[string]any{labelName: fleetPodName, labelInstance: "haptic-gw"}) {
		t.Errorf("service selector = %v", sel)
	}
	if none := newFleet(gw, "uid-1", "cfg", nil, FleetConfig{}, 5555, "t", nil).service(); none != nil {
		t.Errorf("service of a fleet without ports = %v, want none", none)
	}
}

// TestFleetObjectsAreOwnedByTheirGatewayAndThePodsIgnoreTheListeners:
// every object names the Gateway as controlling owner; the pod template
// is the same whatever the listeners (a listener change never rolls the
// pods), runs the agent with the token Secret and HAProxy master-worker,
// and binds low ports through the sysctl.
func TestFleetObjectsAreOwnedByTheirGatewayAndThePodsIgnoreTheListeners(t *testing.T) {
	gw := gatewayapi.Ref{Namespace: "infra", Name: "gw"}
	a := newFleet(gw, "uid-1", "cfg", map[string]string{"team": "edge"}, FleetConfig{Replicas: 1}, 5555, "tok", []gatewayapi.Listener{{Name: "http", Port: 80, Protocol: "HTTP"}})
	b := newFleet(gw, "uid-1", "cfg", map[string]string{"team": "edge"}, FleetConfig{Replicas: 1}, 5555, "tok", []gatewayapi.Listener{{Name: "https", Port: 443, Protocol: "HTTPS"}})
	da, db := encode(t, a.deployment()), encode(t, b.deployment())
	if diff := cmp.Diff(da, db); diff != "" {
		t.Errorf("deployments differ with the listeners (-80 +443):\n%s", diff)
	}
	for name, obj := range map[string]map[string]any{"deployment": da, "service": encode(t, a.service()), "secret": encode(t, a.secret())} {
		md := obj["metadata"].(map[string]any)
		owners := md["ownerReferences"].([]any)
		o := owners[0].(map[string]any)
		if len(owners) != 1 || o["kind"] != "Gateway" || o["name"] != "gw" || o["uid"] != "uid-1" || o["controller"] != true {
			t.Errorf("%s owners = %v", name, owners)
		}
		if md["namespace"] != "infra" || md["annotations"].(map[string]any)[AnnotationFleetGateway] != "infra/gw" {
			t.Errorf("%s metadata = %v", name, md)
		}
		if l := md["labels"].(map[string]any); l["team"] != "edge" || l[LabelFleetConfig] != "cfg" || l[LabelGatewayName] != "gw" {
			t.Errorf("%s labels = %v", name, l)
		}
	}
	spec := da["spec"].(map[string]any)
	if spec["replicas"] != float64(1) {
		t.Errorf("replicas = %v", spec["replicas"])
	}
	pod := spec["template"].(map[string]any)["spec"].(map[string]any)
	containers := pod["containers"].([]any)
	agent := containers[1].(map[string]any)
	args := strings.Join(toStrings(agent["args"]), " ")
	if !strings.Contains(args, "--listen=$(POD_IP):5555") || !strings.Contains(args, "--token-file=/etc/haptic/token/token") {
		t.Errorf("agent args = %s", args)
	}
	if hp := strings.Join(toStrings(containers[0].(map[string]any)["args"]), " "); hp != "-W -S unix@master.sock,mode,600 -f /var/lib/haptic/haproxy.cfg" {
		t.Errorf("haproxy args = %s", hp)
	}
	// The agent and its bootstrap run haptic-agent, not the image's
	// entrypoint (haptic); HAProxy runs its image's own.
	bootstrap := pod["initContainers"].([]any)[0].(map[string]any)
	if cmd, args := toStrings(bootstrap["command"]), toStrings(bootstrap["args"]); !slices.Equal(cmd, []string{"/usr/local/bin/haptic-agent"}) || args[0] != "bootstrap" {
		t.Errorf("bootstrap runs %v %v; want /usr/local/bin/haptic-agent bootstrap …", cmd, args)
	}
	if cmd, args := toStrings(agent["command"]), toStrings(agent["args"]); !slices.Equal(cmd, []string{"/usr/local/bin/haptic-agent"}) || !strings.HasPrefix(args[0], "--") {
		t.Errorf("agent runs %v %v; want /usr/local/bin/haptic-agent --…", cmd, args)
	}
	if cmd, ok := containers[0].(map[string]any)["command"]; ok {
		t.Errorf("haproxy command = %v; want the image's entrypoint", cmd)
	}
	sysctls := pod["securityContext"].(map[string]any)["sysctls"].([]any)
	if s := sysctls[0].(map[string]any); s["name"] != "net.ipv4.ip_unprivileged_port_start" || s["value"] != "0" {
		t.Errorf("sysctls = %v", sysctls)
	}
	if work := pod["volumes"].([]any)[0].(map[string]any); work["name"] != "haproxy" || work["emptyDir"].(map[string]any)["medium"] != "Memory" {
		t.Errorf("work volume = %v; want the emptyDir haproxy on a tmpfs (medium Memory)", work)
	}
	if vol := pod["volumes"].([]any)[1].(map[string]any)["secret"].(map[string]any); vol["secretName"] != "haptic-gw-agent-token" {
		t.Errorf("token volume = %v", vol)
	}
	if d := encode(t, a.secret())["data"].(map[string]any)["token"]; d != "dG9r" { // base64("tok")
		t.Errorf("secret token = %v", d)
	}
	if fleetDigest(a) == fleetDigest(b) {
		t.Error("fleet digests equal although the Service ports differ")
	}
}

func toStrings(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}

// TestFleetCarriesTheGatewaysInfrastructureMetadata: the labels and
// annotations of spec.infrastructure reach every object and the pods;
// they cannot replace the fleet's own labels.
func TestFleetCarriesTheGatewaysInfrastructureMetadata(t *testing.T) {
	gw := map[string]any{"spec": map[string]any{"infrastructure": map[string]any{
		"labels":      map[string]any{"team": "edge", labelInstance: "hijack"},
		"annotations": map[string]any{"cost-center": "42"},
	}}}
	f := newFleet(gatewayapi.Ref{Namespace: "infra", Name: "gw"}, "uid-1", "cfg", nil, FleetConfig{}, 5555, "t", []gatewayapi.Listener{{Name: "http", Port: 80, Protocol: "HTTP"}})
	f.infraLabels, f.infraAnnotations = infrastructure(gw)
	d := encode(t, f.deployment())
	tmpl := d["spec"].(map[string]any)["template"].(map[string]any)["metadata"].(map[string]any)
	for name, md := range map[string]map[string]any{
		"deployment": d["metadata"].(map[string]any), "pod template": tmpl,
		"service": encode(t, f.service())["metadata"].(map[string]any), "secret": encode(t, f.secret())["metadata"].(map[string]any),
	} {
		l, a := md["labels"].(map[string]any), md["annotations"].(map[string]any)
		if l["team"] != "edge" || a["cost-center"] != "42" {
			t.Errorf("%s: labels %v, annotations %v; want team=edge, cost-center=42", name, l, a)
		}
		if l[labelInstance] != "haptic-gw" {
			t.Errorf("%s: %s = %v, want the fleet's own haptic-gw", name, labelInstance, l[labelInstance])
		}
	}
}
