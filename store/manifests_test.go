package store_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/haptic-io/haptic/store"
)

func TestDecodeManifestsSplitsDocumentsAndFlattensLists(t *testing.T) {
	in := `# leading comment
apiVersion: v1
kind: Service
metadata: {name: a, namespace: ns}
spec: {ports: [{port: 80, weight: 1.5}]}
---
---   # empty document
--- 
apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: Secret, metadata: {name: b}}
- {apiVersion: v1, kind: Secret, metadata: {name: c}}
---
apiVersion: v1
kind: ServiceList
items: [{apiVersion: v1, kind: Service, metadata: {name: d}}]
---
{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "e"}}
`
	objs, err := store.DecodeManifests([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range objs {
		got = append(got, o["kind"].(string)+"/"+o["metadata"].(map[string]any)["name"].(string))
	}
	if diff := cmp.Diff([]string{"Service/a", "Secret/b", "Secret/c", "Service/d", "Pod/e"}, got); diff != "" {
		t.Errorf("objects (-want +got):\n%s", diff)
	}
	port := objs[0]["spec"].(map[string]any)["ports"].([]any)[0].(map[string]any)
	if port["port"] != int64(80) || port["weight"] != 1.5 {
		t.Errorf("numbers = %#v, %#v; want int64(80), 1.5", port["port"], port["weight"])
	}
}

func TestDecodeManifestsRejectsNonMappings(t *testing.T) {
	for name, in := range map[string]string{
		"scalar":         "just a string",
		"list":           "- a\n- b",
		"bad yaml":       "a: [",
		"items not list": "kind: List\nitems: 3",
		"item scalar":    "kind: List\nitems: [3]",
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := store.DecodeManifests([]byte(in)); err == nil {
				t.Errorf("decoded %q", in)
			}
		})
	}
}

func TestLoadDirReadsManifestsRecursivelyIntoAliases(t *testing.T) {
	dir := t.TempDir()
	write := func(p, s string) {
		t.Helper()
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a.yaml", "apiVersion: v1\nkind: Service\nmetadata: {name: s1, namespace: ns}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: ignored}\n")
	write("sub/b.yml", "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: discovery.k8s.io/v1, kind: EndpointSlice, metadata: {name: e1, namespace: ns, labels: {kubernetes.io/service-name: s1}}}\n")
	write("sub/c.json", `{"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": {"name": "i1", "namespace": "ns"}}`)
	write("notes.txt", "not: [yaml")
	st, err := store.LoadDir(dir, testResources)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, alias := range []string{"services", "endpoints", "ingresses", "secrets"} {
		got[alias] = names(st.List(alias))
	}
	want := map[string][]string{"services": {"ns/s1"}, "endpoints": {"ns/e1"}, "ingresses": {"ns/i1"}, "secrets": {}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("aliases (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"ns/e1"}, names(st.Fetch("endpoints", "ns", "s1"))); diff != "" {
		t.Errorf("fetch (-want +got):\n%s", diff)
	}

	write("dup.yaml", "apiVersion: v1\nkind: Service\nmetadata: {name: s1, namespace: ns}\n")
	if _, err := store.LoadDir(dir, testResources); err == nil || !strings.Contains(err.Error(), "already loaded from") {
		t.Errorf("duplicate object: %v", err)
	}
	if _, err := store.LoadDir(filepath.Join(dir, "missing"), testResources); err == nil {
		t.Error("missing directory loaded")
	}
}

func TestResourceForKindPluralizesKnownAndRegularKinds(t *testing.T) {
	for kind, want := range map[string]string{
		"Ingress": "ingresses", "EndpointSlice": "endpointslices", "Endpoints": "endpoints",
		"Service": "services", "IngressClass": "ingressclasses", "NetworkPolicy": "networkpolicies",
		"Widget": "widgets", "Box": "boxes", "Policy": "policies", "Gateway": "gateways",
		"Match": "matches", "Toy": "toys", "": "",
	} {
		if got := store.ResourceForKind(kind); got != want {
			t.Errorf("ResourceForKind(%q) = %q, want %q", kind, got, want)
		}
	}
}
